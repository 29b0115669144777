"""SessionStart (async): give the hooks and `memory` a Python that has the plugin's requirements.

Claude Code installs no Python packages for a plugin. Once per session, in the background,
this hook records in $CLAUDE_PLUGIN_DATA/interpreter (see _lib/workspace/runtime.py) the first of:

1. the interpreter recorded before, or the one running this hook (python3 from PATH at the
   first session), when it can import requirements.txt: used as it is, never resolved to
   another path (a virtualenv's bin/python is that virtualenv);
2. the plugin's own virtualenv, $CLAUDE_PLUGIN_DATA/venv, when it has them;
3. that virtualenv built (or brought up to date) now with pip from requirements.txt.

When the build fails (offline, no venv module), the running interpreter is recorded with
what it lacks and why, and the build is tried again at the first session after a delay that
grows with each failure (a changed requirements.txt is tried at once). The commands keep
working meanwhile, without the features that need the missing packages (`memory doctor`
says which). After a change, the plugin is byte-compiled with the new interpreter so later
hooks start from cached bytecode. Sessions starting together do not race: one holds the lock,
the others leave. The logic: _lib/session/bootstrap.py.
"""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.bootstrap)
