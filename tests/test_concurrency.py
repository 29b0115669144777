"""Concurrent writers on one scope: nothing lost, index consistent (the lock and atomic writes)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

from helpers import REPO, Env, schema_errors

WORKER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {scripts!r})
    from _lib.ops import store
    from _lib.workspace.scopes import Workspace
    worker = int(sys.argv[1])
    for i in range(int(sys.argv[2])):
        # every worker uses the same titles: slugs collide and must still all be distinct
        store.write(Workspace(), store.NewMemory(title=f"Shared title {{i % 5}}", tags=["load"],
                                                 content=f"worker {{worker}} item {{i}}"))
""")


def test_8_processes_x_25_writes_lose_nothing(env: Env) -> None:
    script = env.root / "worker.py"
    script.write_text(WORKER.format(scripts=str(REPO / "scripts")))
    workers = [subprocess.Popen([sys.executable, str(script), str(n), "25"], cwd=env.project,
                                env=env.environ(), stderr=subprocess.PIPE) for n in range(8)]
    for proc in workers:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    files = sorted(env.project_dir.glob("*.md"))
    assert len(files) == 200
    index = env.index(env.project_dir)
    assert schema_errors(index, "index") == []
    assert len(index["memories"]) == 200
    assert set(index["memories"]) == {path.stem for path in files}
    bodies = {env.ok("read", path.stem, "--json").json()["content"] for path in files[:: 10]}
    assert len(bodies) == 20
    contents = sorted(path.read_text().rsplit("\n", 1)[-1] for path in files)
    assert contents == sorted(f"worker {w} item {i}" for w in range(8) for i in range(25))
    assert not list(env.project_dir.glob(".*.tmp")), "no temp files may be left behind"


def test_concurrent_cli_writes_and_reads(env: Env) -> None:
    def write(n: int) -> int:
        return env.run("write", f"Parallel {n % 3}", "--tags", "p", "--content", f"n={n}").code

    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(write, range(24)))
    assert codes == [0] * 24
    listed = env.ok("list", "--json").json()
    assert listed["count"] == 24
    assert len(json.loads((env.project_dir / "index.json").read_text())["memories"]) == 24


def test_stale_temp_cleanup_spares_writers_still_running(tmp_path) -> None:
    """A process holding the scope lock removes temp files of killed writes, but not the temp file
    of a live process writing beside the memories without the lock (.gitignore on first write)."""
    from _lib.base import fsutil

    sleeper = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    try:
        live_temp = tmp_path / f"..gitignore.{sleeper.pid}.123.tmp"
        dead_temp = tmp_path / f".learning-x.md.{dead}.456.tmp"
        for path in (live_temp, dead_temp):
            path.write_text("partial")
        assert fsutil.remove_stale_temps(tmp_path) == 1
        assert live_temp.exists() and not dead_temp.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert fsutil.remove_stale_temps(tmp_path) == 1 and not live_temp.exists()
