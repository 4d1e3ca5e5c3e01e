"""Several fibsd processes as one server: a cluster of nodes over a Redis broker.

``node`` (one node: membership, the other nodes' users as proxies, where commands run),
``remote`` (a proxy user's session), ``messages`` (what nodes say to each other),
``broker`` (the two Redis connections) and ``envelope`` (signatures, encryption and
replay protection of every message).  ``fibsd.app`` wires a node in with
``--cluster``; without it nothing here is imported.  docs/cluster-internals.md.
"""
