"""The two on-disk caches: tool names for completion, protocol eras for connecting.

Both are optimisations: a missing, corrupt or unwritable cache must read as empty and never
fail a connection or a keystroke.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orbmcp.core.tooling import toolcache
from orbmcp.core.wire import era
from orbmcp.core.wire.era import EraCache

# --- tool cache ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "not json {",
        "[1, 2, 3]",
        '{"version": 1}',
        '{"version": 1, "servers": ["a"]}',
    ],
)
def test_corrupt_tool_cache_reads_as_empty_and_is_repaired_by_a_save(tmp_path: Path, content: str) -> None:
    path = tmp_path / "cache" / "tools.json"
    path.parent.mkdir()
    path.write_text(content)
    assert toolcache.load(path) == {}
    assert toolcache.save(path, "srv", ["b", "a"])
    assert toolcache.load(path) == {"srv": ["a", "b"]}


def test_tool_cache_skips_malformed_entries_and_unsafe_names(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "servers": {
                    "good": {
                        "tools": ["ok", "has space", "bell\x07", "rtl\u202eevil", 7, "x" * 129, "fine-2"]
                    },
                    "not-a-dict": ["a"],
                    "no-list": {"tools": "a"},
                },
            }
        )
    )
    assert toolcache.load(path) == {"good": ["ok", "fine-2"]}
    assert toolcache.is_safe_name("a.b:c/d")
    assert not toolcache.is_safe_name("")
    assert not toolcache.is_safe_name("tab\tname")
    assert not toolcache.is_safe_name("c1\x9bcontrol")


def test_tool_cache_save_keeps_other_servers_dedups_and_caps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tools.json"
    monkeypatch.setattr(toolcache, "MAX_TOOLS_PER_SERVER", 3)
    assert toolcache.save(path, "one", ["z", "y", "x", "w", "x", "bad name"])
    assert toolcache.save(path, "two", ["t"])
    assert toolcache.load(path) == {"one": ["w", "x", "y"], "two": ["t"]}
    data = json.loads(path.read_text())
    assert data["version"] == toolcache.CACHE_VERSION and isinstance(data["servers"]["one"]["updated"], int)


def test_tool_cache_forget(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    toolcache.forget(path, "ghost")  # nothing cached: nothing written
    assert not path.exists()
    toolcache.save(path, "a", ["t1"])
    toolcache.save(path, "b", ["t2"])
    before = path.stat().st_ino
    toolcache.forget(path, "ghost")
    assert path.stat().st_ino == before  # an unknown server is no reason to rewrite
    toolcache.forget(path, "a")
    assert toolcache.load(path) == {"b": ["t2"]}


def test_unwritable_tool_cache_fails_quietly(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    path = blocker / "tools.json"
    assert toolcache.save(path, "srv", ["a"]) is False
    toolcache.forget(path, "srv")  # no exception either
    assert toolcache.load(path) == {}


def test_failed_tool_cache_replace_leaves_no_temp_file(tmp_path: Path) -> None:
    # The target is a directory: the temp file is written, the rename fails, the temp is removed.
    path = tmp_path / "tools.json"
    path.mkdir()
    assert toolcache.save(path, "srv", ["a"]) is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tools.json", "tools.json.lock"]
    (path / "keep").write_text("x")  # forget on a cache it cannot read is a no-op
    toolcache.forget(path, "srv")
    assert path.is_dir()


# --- era cache ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "garbage",
        '{"format": 2, "servers": {"k": {"protocolVersion": "2025-11-25"}}}',
        '{"format": 1, "servers": []}',
        '{"format": 1, "servers": {"k": "2025-11-25"}}',
    ],
)
def test_unusable_era_cache_reads_as_empty(tmp_path: Path, content: str) -> None:
    path = tmp_path / "eras.json"
    path.write_text(content)
    cache = EraCache(path)
    assert cache.get("k") is None and cache.entry("k") is None


def test_era_cache_records_known_versions_once(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "eras.json"
    cache = EraCache(path)
    cache.record("k", "1999-01-01")  # unknown version: nothing to remember
    cache.record("k", None)
    assert not path.exists()
    cache.record("k", "2025-06-18")
    assert cache.get("k") == "legacy"
    entry = cache.entry("k")
    assert entry is not None and entry["era"] == "legacy" and entry["protocolVersion"] == "2025-06-18"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    inode = path.stat().st_ino
    cache.record("k", "2025-06-18")
    assert path.stat().st_ino == inode  # unchanged: no write on every connect
    cache.record("k", "2026-07-28")
    assert cache.get("k") == "modern" and path.stat().st_ino != inode


def test_era_cache_forget(tmp_path: Path) -> None:
    path = tmp_path / "eras.json"
    cache = EraCache(path)
    cache.record("a", "2025-11-25")
    cache.record("b", "2026-07-28")
    inode = path.stat().st_ino
    cache.forget("missing")
    assert path.stat().st_ino == inode
    cache.forget("a")
    assert cache.get("a") is None and cache.get("b") == "modern"


def test_era_cache_keeps_the_newest_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(era, "MAX_CACHE_ENTRIES", 3)
    path = tmp_path / "eras.json"
    servers = {f"k{i}": {"era": "legacy", "protocolVersion": "2025-11-25", "at": float(i)} for i in range(4)}
    servers["no-stamp"] = {"era": "legacy", "protocolVersion": "2025-11-25"}
    path.write_text(json.dumps({"format": 1, "servers": servers}))
    cache = EraCache(path)
    cache.record("new", "2026-07-28")
    kept = json.loads(path.read_text())["servers"]
    assert sorted(kept) == ["k2", "k3", "new"]


def test_unwritable_era_cache_never_fails_a_connection(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("not a directory")
    cache = EraCache(blocker / "eras.json")
    cache.record("k", "2025-11-25")
    assert cache.get("k") is None

    target = tmp_path / "eras.json"
    target.mkdir()  # the rename over it fails after the temp file was written
    EraCache(target).record("k", "2025-11-25")
    assert sorted(os.listdir(tmp_path)) == ["cache", "eras.json", "eras.json.lock"]


# --- concurrent writers -------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from orbmcp.core.tooling import toolcache
    from orbmcp.core.wire.era import EraCache

    kind, path, writer = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    print("ready", flush=True)
    sys.stdin.read()  # all writers start together once the test closes their stdin
    for i in range(20):
        key = f"w{writer}-{i}"
        if kind == "tools":
            assert toolcache.save(path, key, ["t"])
        else:
            EraCache(path).record(key, "2025-11-25")
    """
)


@pytest.mark.parametrize("kind", ["tools", "eras"])
def test_concurrent_writers_keep_every_entry(tmp_path: Path, kind: str) -> None:
    # Ten orbmcp processes discovering at once: each read-modify-write runs under the file's lock,
    # so no writer replaces the file with a copy that lacks another's entries.
    path = tmp_path / "cache" / f"{kind}.json"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, kind, str(path), str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        for n in range(10)
    ]
    try:
        for writer in writers:
            assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.close()
        assert [writer.wait(timeout=120) for writer in writers] == [0] * 10
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
    if kind == "tools":
        keys = set(toolcache.load(path))
    else:
        keys = {key for key in json.loads(path.read_text())["servers"] if EraCache(path).get(key) == "legacy"}
    assert keys == {f"w{n}-{i}" for n in range(10) for i in range(20)}


HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from orbmcp import fs

    with fs.locked(Path(sys.argv[1])):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes our stdin
    """
)


@pytest.mark.parametrize("kind", ["tools", "eras"])
def test_a_write_that_cannot_take_the_lock_is_logged_and_merged_by_the_next(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from orbmcp.core.session import cache_writes

    path = tmp_path / "cache" / f"{kind}.json"

    def write(key: str) -> bool | None:
        if kind == "tools":
            return toolcache.save(path, key, ["t"])
        EraCache(path).record(key, "2025-11-25")
        return None

    def keys() -> set[str]:
        if kind == "tools":
            return set(toolcache.load(path))
        return {key for key in json.loads(path.read_text())["servers"] if EraCache(path).get(key) == "legacy"}

    write("first")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        # The lock held past the wait (the wait is the subject here: shortened so the test is quick).
        monkeypatch.setattr(cache_writes, "LOCK_WAIT_S", 0.2)
        assert write("blocked") in (False, None)
        assert cache_writes.pending(path) == 1
        assert any("kept for the next write" in r.getMessage() for r in caplog.records)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert keys() == {"first"}
    write("next")
    assert keys() == {"first", "blocked", "next"}  # the next writer merged the kept entry
    assert cache_writes.pending(path) == 0
