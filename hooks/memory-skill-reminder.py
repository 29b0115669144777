"""UserPromptSubmit: after significant edits with no memory captured, a short nudge to capture one."""

from _hook import run_hook

run_hook("memory-skill-reminder")
