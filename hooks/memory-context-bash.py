"""PostToolUse (Bash): warn about gotchas relevant to the command and to errors in its output."""

from _hook import run_hook

run_hook("memory-context-bash")
