"""Atomic steps survive a crash whole or not at all: ``execute_many(atomic=True)`` and
``xadd_batch(atomic=True, after=...)`` (the Spark sink's rows + marker) are one block in a
durable store's log; a log cut inside the block (a crash during its write) reopens with
none of it, the whole log with all of it."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pytest
import xstreams
from xstreams.exceptions import StoreRepairedWarning


def _cut_copy(src: Path, dst: Path, cut: int) -> xstreams.Store:
    """Open a copy of the store at ``src`` whose log is cut to ``cut`` bytes; a cut log
    must be reported as repaired, a whole one not."""
    shutil.copytree(src, dst)
    log = dst / "log.1.aof"
    data = log.read_bytes()
    log.write_bytes(data[:cut])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = xstreams.Store(str(dst))
    repaired = [w for w in caught if issubclass(w.category, StoreRepairedWarning)]
    assert bool(repaired) == (cut < len(data)), (cut, len(data), caught)
    return store


def test_rows_and_marker_are_all_or_nothing(tmp_path: Path) -> None:
    src = tmp_path / "store"
    s = xstreams.Store(str(src), fsync="always")
    s.execute_command("XADD", "out", "1-1", "f", "before")
    before = (src / "log.1.aof").stat().st_size
    batch = pa.record_batch({"f": ["x", "y", "z"]})
    res = s.xadd_batch(
        "out", batch, atomic=True, after=[[b"XADD", b"marker", b"*", b"batch", b"7"]]
    )
    assert res.num_rows == 3
    s.close()
    full = (src / "log.1.aof").stat().st_size
    assert full > before
    for i, cut in enumerate((before + 1, (before + full) // 2, full - 1)):
        r = _cut_copy(src, tmp_path / f"cut{i}", cut)
        assert r.execute_command("XLEN", "out") == 1, cut
        assert r.execute_command("XLEN", "marker") == 0, cut
        r.close()
    r = _cut_copy(src, tmp_path / "whole", full)
    assert r.execute_command("XLEN", "out") == 4
    assert r.execute_command("XRANGE", "marker", "-", "+")[0][1] == [b"batch", b"7"]


def test_a_failing_after_command_raises_after_the_rows(tmp_path: Path) -> None:
    s = xstreams.Store()
    s.execute_command("SET", "str", "x")
    batch = pa.record_batch({"f": ["x"]})
    with pytest.raises(xstreams.ResponseError, match="WRONGTYPE"):
        s.xadd_batch("out", batch, after=[[b"XADD", b"str", b"*", b"a", b"b"]])
    assert s.execute_command("XLEN", "out") == 1


def test_atomic_execute_many_is_one_block(tmp_path: Path) -> None:
    src = tmp_path / "store"
    s = xstreams.Store(str(src), fsync="always")
    s.execute_many([["XADD", "a", "1-1", "f", "v"], ["XADD", "b", "1-1", "f", "v"]], atomic=True)
    s.close()
    full = (src / "log.1.aof").stat().st_size
    r = _cut_copy(src, tmp_path / "cut", full - 3)
    assert r.execute_command("XLEN", "a") == 0
    assert r.execute_command("XLEN", "b") == 0
