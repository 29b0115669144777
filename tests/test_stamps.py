"""File stamps (base/stamps.py): how derived files tell that their sources changed."""

from __future__ import annotations

import os
from pathlib import Path

import helpers  # noqa: F401  (puts scripts/ on sys.path)
from _lib.base import fsutil, stamps


def test_a_stamp_changes_when_a_file_is_replaced_or_edited_in_place(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    assert stamps.file_stamp(path) is None
    path.write_text("{}")
    first = stamps.file_stamp(path)
    assert first == stamps.file_stamp(path)
    fsutil.write_atomically(path, "{}")  # same size and content, new inode
    second = stamps.file_stamp(path)
    assert second != first
    info = os.stat(path)
    with open(path, "a") as handle:
        handle.write(" ")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # same mtime: the size still tells
    assert stamps.file_stamp(path) != second


def test_a_scan_stamps_the_files_of_one_kind_and_notes_temp_files(tmp_path: Path) -> None:
    assert stamps.scan(tmp_path / "missing", ".json") is None
    (tmp_path / "1.json").write_text("{}")
    (tmp_path / "notes.md").write_text("x")
    (tmp_path / ".hidden.json").write_text("{}")
    found = stamps.scan(tmp_path, ".json")
    assert found is not None and list(found) == ["1.json"] and not found.leftovers
    assert found["1.json"] == stamps.file_stamp(tmp_path / "1.json")
    (tmp_path / f".1.json.123.456{fsutil.TEMP_SUFFIX}").write_text("")
    assert stamps.scan(tmp_path, ".json").leftovers  # type: ignore[union-attr]


def test_a_fingerprint_changes_with_any_stamp() -> None:
    assert stamps.fingerprint(None) == "none"
    one = stamps.fingerprint({"a": "1:2:3", "b": "4:5:6"})
    assert one == stamps.fingerprint({"b": "4:5:6", "a": "1:2:3"}) and one.startswith("2-")
    assert one != stamps.fingerprint({"a": "1:2:3", "b": "4:5:7"})
