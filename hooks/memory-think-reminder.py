"""UserPromptSubmit: when the prompt asks for a design decision, suggest `memory think` (rarely)."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.memory_think_reminder)
