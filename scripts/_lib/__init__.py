"""Plumbing for the memory plugin: every operation's logic lives here.

Modules never print and never exit; they raise `errors.Error` subclasses that
the scripts turn into one `error:` line and an exit code.
"""

__version__ = "1.0.0"
