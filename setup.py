"""What pyproject.toml cannot say: the packages found under fibsd/ plus two mapped ones.

``fibsd.defaults`` is the top-level ``config/`` directory (default configuration, MOTD
and help texts), shipped inside the package so an installed server finds them with
``importlib.resources``; the files stay in ``config/`` where operators and developers
look for them.  ``twisted.plugins.fibsd_plugin`` is ``fibsd/twistd_plugins/`` installed
where ``twistd`` looks for plugins.  pyproject.toml cannot combine automatic package
discovery with such mappings.
"""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["fibsd*"], exclude=["fibsd.twistd_plugins", "*__pycache__"]),
              "fibsd.defaults", "fibsd.defaults.help"],
    package_dir={"fibsd.defaults": "config", "twisted.plugins": "fibsd/twistd_plugins"},
    package_data={"fibsd.defaults": ["*.toml", "*.txt"], "fibsd.defaults.help": ["*.txt"],
                  "fibsd.web": ["templates/*.html", "static/**/*"]},
    py_modules=["twisted.plugins.fibsd_plugin"],
)
