"""A CLIP client library: typed events for every line a FIBS server sends.

``events`` holds the values, ``parse`` turns one server line into one of them
(pure, no I/O), and ``protocol`` is the Twisted connection that logs in, feeds
every received line through the classifier and sends commands.  The client
never imports the server's packages: it has to work against any FIBS server.
"""
