"""Engine analysis of finished matches (issue 22, protocol/analysis.md).

``model`` is the pure data both the store and the faces use; ``queue`` and ``worker``
run GNU Backgammon in processes of their own: no module of fibsd imports gnubg (GPL),
the worker talks to the ``gnubg`` program over pipes and files.
"""
