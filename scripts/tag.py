#!/usr/bin/env python3
"""Add tags to a memory, or to every memory a filter selects."""

from __future__ import annotations

import _cli
from _lib.ops import curate

EXAMPLES = """\
examples:
  memory tag decision-use-oauth2 auth,security
  memory tag --type gotcha --since 7d needs-review --dry-run
  memory tag --tag oauth auth --yes --json                   # every memory tagged oauth also gets auth

Tags are checked and normalised as `memory write` does (lowercase, hyphens). Tags already
there are left as they are. Remove tags with `memory untag`.
"""


def main(argv: list[str]) -> int:
    return _cli.tag_command(argv, "tag", __doc__.splitlines()[0], EXAMPLES, remove=False, curate=curate)


if __name__ == "__main__":
    _cli.run(main)
