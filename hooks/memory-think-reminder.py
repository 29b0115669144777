"""UserPromptSubmit: when the prompt asks for a design decision, suggest `memory think` (rarely)."""

from _hook import run_hook

run_hook("memory-think-reminder")
