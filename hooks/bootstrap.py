"""SessionStart (async): give the hooks and `memory` a Python that has the plugin's requirements
(what it records and when it builds the plugin's virtualenv: _lib/session/bootstrap.py)."""

from _hook import run_hook

run_hook("bootstrap")
