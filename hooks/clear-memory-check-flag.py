"""PostToolUse (Write, Edit, MultiEdit, NotebookEdit, Bash): track edits and memory captures.

Edits raise the session's "memory check" counter that memory-skill-reminder reads; a
`memory write`/`update`/`link`/`think` run clears it. Changed files and written memories
are kept for the session memory.
"""

from _hook import run_hook

run_hook("clear-memory-check-flag")
