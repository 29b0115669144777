"""End-to-end tests that drive the real Claude Code CLI offline (see harness.py)."""
