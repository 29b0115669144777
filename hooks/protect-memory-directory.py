"""PreToolUse (Write, Edit, MultiEdit, NotebookEdit, Bash): deny direct changes to memory directories.

Also shell commands that would remove, move or overwrite a directory holding one (the rules:
_lib/session/guard.py, bashguard.py). The reason names what is protected and what to use instead.
"""

from _hook import run_hook

run_hook("protect-memory-directory")
