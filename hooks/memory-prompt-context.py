"""UserPromptSubmit: the memories most relevant to the prompt, each once per session unless changed."""

from _hook import run_hook

run_hook("memory-prompt-context")
