"""UserPromptSubmit: the memories most relevant to the prompt, each once per session unless changed."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.memory_prompt_context)
