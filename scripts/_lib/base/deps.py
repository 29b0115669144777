"""Third-party imports, loaded only on the paths that need them.

The `memory` launcher and the hooks start Python with -S: skipping site-packages
setup (and every .pth file in it) saves 5-20 ms on each command that needs no
third-party package. The first import of one runs the normal site setup, then
imports it.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from . import errors

_site_ready = not sys.flags.no_site


def load(name: str) -> ModuleType:
    """Import a third-party module such as `yaml`, `requests` or `jsonschema`."""
    global _site_ready
    try:
        return importlib.import_module(name)
    except ImportError:
        if _site_ready:
            raise _missing(name) from None
    _add_site_directories()  # the cheap way first: plain package directories, no .pth files
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    import site

    site.main()  # the full setup, for packages that only a .pth file makes importable
    _site_ready = True
    try:
        return importlib.import_module(name)
    except ImportError:
        raise _missing(name) from None


def _add_site_directories() -> None:
    """Put the interpreter's (or its virtualenv's) site-packages on sys.path, as site does, minus .pth files."""
    import os
    import site

    prefixes = [sys.prefix]
    executable_dir = os.path.dirname(sys.executable)
    for config in (os.path.join(executable_dir, "pyvenv.cfg"),
                   os.path.join(os.path.dirname(executable_dir), "pyvenv.cfg")):
        if os.path.isfile(config):  # a virtualenv: on Python 3.10, -S leaves sys.prefix at the base
            venv = os.path.dirname(config)
            with open(config, encoding="utf-8") as handle:
                shared = "include-system-site-packages = true" in handle.read().replace("\t", " ").lower()
            prefixes = [venv] + ([sys.base_prefix] if shared else [])
            break
    else:
        user_site = site.getusersitepackages()
        if os.path.isdir(user_site):
            sys.path.append(user_site)
    for directory in site.getsitepackages(prefixes):
        if os.path.isdir(directory) and directory not in sys.path:
            sys.path.append(directory)


def _missing(name: str) -> errors.DependencyMissing:
    package = {"yaml": "PyYAML"}.get(name, name)
    return errors.DependencyMissing(
        f"{package} is not installed for {sys.executable}",
        "`memory doctor` shows how to give this interpreter the plugin's requirements")
