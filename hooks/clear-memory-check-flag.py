"""PostToolUse (Write, Edit, MultiEdit, NotebookEdit, Bash): track edits and memory captures.

Edits raise the session's "memory check" counter that memory-skill-reminder reads; a
`memory write`/`update`/`link`/`think` run clears it. Changed files and written memories
are kept for the session memory.
"""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.clear_memory_check_flag)
