"""The ``twistd fibsd`` plugin.

Installed as ``twisted/plugins/fibsd_plugin.py`` (pyproject.toml maps the package
``twisted.plugins`` onto this directory, which has no ``__init__.py`` so Twisted's own
stays in charge).  Only this module lives here: Twisted imports every module in its
plugin directories.
"""

from twisted.application.service import ServiceMaker

fibsd = ServiceMaker(
    "fibsd", "fibsd.__main__", "A FIBS-compatible backgammon server", "fibsd")
