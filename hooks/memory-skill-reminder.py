"""UserPromptSubmit: after significant edits with no memory captured, a short nudge to capture one."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.memory_skill_reminder)
