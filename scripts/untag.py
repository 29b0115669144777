#!/usr/bin/env python3
"""Remove tags from a memory, or from every memory a filter selects."""

from __future__ import annotations

import _cli
from _lib.ops import curate

EXAMPLES = """\
examples:
  memory untag decision-use-oauth2 security
  memory untag --tag needs-review needs-review --yes         # clear a review marker everywhere

A memory keeps at least one tag: an untag that would leave one with none is refused (nothing
changes). Add tags with `memory tag`.
"""


def main(argv: list[str]) -> int:
    return _cli.tag_command(argv, "untag", __doc__.splitlines()[0], EXAMPLES, remove=True, curate=curate)


if __name__ == "__main__":
    _cli.run(main)
