"""Replay of persisted stores by parts (what the Spark reader runs, without Spark).

Invariant: planning a read of a store and reading every part gives exactly XRANGE on the
store reopened from its files — whatever the logs did since the snapshot (appends, IDMP
duplicates, deletes, trims, renames, group commands), with or without a snapshot, and
with ``group``: exactly the entries that group has not acknowledged (its pending entries
that still exist, then the entries after its last-delivered ID). Also: which kind of part
each case gets (partial snapshot reads, log tail, full load), that a plan pins the files
(later writes are not seen; a compaction fails the parts), and the errors.
"""

from __future__ import annotations

import random
from typing import Any, List, Optional, Tuple

import pytest
import xstreams
from arrow_support import expected
from xstreams import _xstreams
from xstreams import exceptions as exc

NOW = 1_700_000_000_000
SMALL = {"stream-node-max-entries": 4}


def read_parts(
    path: str,
    streams: List[str],
    start: Any = None,
    end: Any = None,
    group: Optional[str] = None,
    rows_per_part: int = 6,
    db: int = 0,
) -> Tuple[List[tuple], List[str]]:
    files, parts = _xstreams._replay_plan(
        path, [s.encode() for s in streams], start, end, group, db, rows_per_part
    )
    out: List[tuple] = []
    loaded = None
    for p in parts:
        if p[1] == "full":
            loaded = loaded or _xstreams._ReplayStore(files)
            batches = loaded.read(p, group=group, db=db, max_rows=5)
        else:
            batches = _xstreams._replay_read(files, p, group=group, db=db, max_rows=5)
        for b in batches:
            for s, i, f in zip(b["stream"].to_pylist(), b["id"].to_pylist(),
                               b["fields"].to_pylist()):  # fmt: skip
                out.append((s, i, [tuple(x) for x in f]))
    return out, [p[1] for p in parts]


def add(s: xstreams.Store, key: str, n: int, start_ms: int = 1) -> None:
    for i in range(n):
        s.execute_command("XADD", key, f"{start_ms + i}-1", "f", f"v{i}", "g", str(i % 3))


@pytest.fixture
def store(tmp_path):
    s = xstreams.Store(str(tmp_path / "st"), config=SMALL, clock_ms=NOW)
    yield s
    if not s.closed:
        s.close()


def check(s: xstreams.Store, streams: List[str], kinds: set, **kw: Any) -> List[str]:
    got, got_kinds = read_parts(s.path, streams, **kw)
    want = expected(s.path, streams, kw.get("start"), kw.get("end"), kw.get("group"))
    assert got == want
    assert set(got_kinds) <= kinds, got_kinds
    return got_kinds


def test_snapshot_only_reads_node_ranges(store):
    add(store, "a", 40)
    add(store, "b", 3, 100)
    store.compact()
    kinds = check(store, ["a", "b", "missing"], {"snapshot"})
    assert kinds.count("snapshot") >= 6  # 40 entries, ~6 per part
    for start, end in [("5", "20"), ("(5-1", "(20-1"), ("-", "3"), ("39", "+"), ("50", "60")]:
        check(store, ["a"], {"snapshot"}, start=start, end=end)


def test_appends_after_snapshot_read_as_tail(store):
    add(store, "a", 20)
    store.compact()
    add(store, "a", 10, 50)
    add(store, "new", 5, 7)
    kinds = check(store, ["a", "new"], {"snapshot", "tail"})
    assert "tail" in kinds and "full" not in kinds
    check(store, ["a"], {"snapshot", "tail"}, start="10", end="55")


def test_idmp_duplicates_in_the_log(store):
    for i in range(12):
        store.execute_command("XADD", "a", "IDMP", "p", f"i{i % 5}", "*", "n", str(i))
        store.advance_clock_ms(1)
    store.compact()
    for i in range(12):
        store.execute_command("XADD", "a", "IDMP", "p", f"i{i % 7}", "*", "n", str(100 + i))
        store.execute_command("XADD", "a", "IDMPAUTO", "q", "*", "n", str(i % 4))
        store.advance_clock_ms(1)
    kinds = check(store, ["a"], {"snapshot", "tail"})
    assert "tail" in kinds


@pytest.mark.parametrize(
    "cmd",
    [
        ["XDEL", "a", "3-1"],
        ["XTRIM", "a", "MAXLEN", "5"],
        ["XADD", "a", "MAXLEN", "7", "*", "f", "x"],
        ["DEL", "a"],
        ["RENAME", "b", "a"],
        ["FLUSHALL"],
        ["XSETID", "a", "999-0"],
    ],
)
def test_other_log_commands_read_from_a_full_load(store, cmd):
    add(store, "a", 20)
    add(store, "b", 4, 500)
    store.compact()
    add(store, "a", 3, 100)
    store.execute_command(*cmd)
    kinds = check(store, ["a", "b"], {"snapshot", "tail", "full"})
    if cmd[0] != "FLUSHALL":
        assert "full" in kinds


def test_log_only_store(store):
    add(store, "a", 15)
    assert set(check(store, ["a"], {"tail"})) == {"tail"}
    store.execute_command("XDEL", "a", "2-1")
    assert set(check(store, ["a"], {"full"})) == {"full"}


def test_group_reads(store):
    add(store, "a", 30)
    store.execute_command("XGROUP", "CREATE", "a", "g", "0")
    store.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "12", "STREAMS", "a", ">")
    store.execute_command("XACK", "a", "g", "1-1", "2-1", "5-1")
    store.execute_command("XDEL", "a", "3-1")  # pending but deleted: not replayed
    store.compact()
    kinds = check(store, ["a"], {"snapshot"}, group="g")
    assert set(kinds) == {"snapshot"}
    add(store, "a", 4, 100)  # appends keep the group state
    assert set(check(store, ["a"], {"snapshot", "tail"}, group="g")) == {"snapshot", "tail"}
    store.execute_command("XACK", "a", "g", "6-1")  # group state changed in the log
    assert "full" in check(store, ["a"], {"snapshot", "full"}, group="g")
    # Without a group, group commands leave the entries alone: no full load.
    assert "full" not in check(store, ["a"], {"snapshot", "tail"})
    with pytest.raises(exc.NoGroupError):
        read_parts(store.path, ["a"], group="nope")
    with pytest.raises(exc.NoGroupError):
        read_parts(store.path, ["missing"], group="g")


def test_random_histories(tmp_path):
    rng = random.Random(11)
    for seed in range(8):
        s = xstreams.Store(str(tmp_path / f"r{seed}"), config=SMALL, clock_ms=NOW)
        keys = ["a", "b"]
        for k in keys:
            s.execute_command("XGROUP", "CREATE", k, "g", "0", "MKSTREAM")
        for step in range(rng.randint(30, 120)):
            k = rng.choice(keys)
            r = rng.random()
            if r < 0.6:
                s.execute_command("XADD", k, "*", "f", str(step))
            elif r < 0.65:
                s.execute_command("XADD", k, "IDMP", "p", f"i{rng.randint(0, 5)}", "*", "f", "1")
            elif r < 0.72:
                s.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", k, ">")
            elif r < 0.76:
                pend = s.execute_command("XPENDING", k, "g", "-", "+", 2)
                if pend:
                    s.execute_command("XACK", k, "g", pend[0][0])
            elif r < 0.79 and seed % 2:
                ids = s.execute_command("XRANGE", k, "-", "+", "COUNT", 2)
                if ids:
                    s.execute_command("XDEL", k, ids[-1][0])
            elif r < 0.81 and seed % 4 == 1:
                s.execute_command("XTRIM", k, "MAXLEN", "~", "10")
            elif r < 0.85:
                s.compact()
            s.advance_clock_ms(rng.randint(0, 3))
        for group in (None, "g"):
            for start, end in [(None, None), ("(5", "+"), ("-", str(NOW + 20))]:
                got, _ = read_parts(
                    s.path, keys, start, end, group, rows_per_part=rng.randint(1, 9)
                )
                assert got == expected(s.path, keys, start, end, group), (seed, group, start)
        s.close()


def test_plan_pins_the_files(store):
    add(store, "a", 10)
    store.compact()
    add(store, "a", 3, 100)
    files, parts = _xstreams._replay_plan(store.path, [b"a"], rows_per_part=4)
    before = expected(store.path, ["a"])
    add(store, "a", 5, 200)  # after the plan: not seen
    got = []
    for p in parts:
        for b in _xstreams._replay_read(files, p):
            got += b["id"].to_pylist()
    assert got == [e[1] for e in before]
    store.compact()  # the plan's files are gone
    with pytest.raises(exc.XStreamsError, match="compacted"):
        _xstreams._replay_read(files, parts[0])


def test_other_database_and_typed_read(tmp_path):
    s = xstreams.Store(str(tmp_path / "d"), clock_ms=NOW)
    s.execute_command("XADD", "a", "1-1", "n", "5", "x", "0.5", db=2)
    s.execute_command("XADD", "a", "2-1", "n", "6", db=2)
    s.compact()
    s.close()
    import pyarrow as pa

    files, parts = _xstreams._replay_plan(s.path, [b"a"], db=2)
    schema = pa.schema([("n", pa.int32()), ("x", pa.float64())])
    (b,) = _xstreams._replay_read(files, parts[0], db=2, schema=schema)
    assert b.schema.names == ["stream", "id", "ms", "seq", "n", "x"]
    assert b["ms"].type == pa.int64()
    assert b.select(["n", "x"]).to_pylist() == [{"n": 5, "x": 0.5}, {"n": 6, "x": None}]
    assert _xstreams._replay_plan(s.path, [b"a"], db=0)[1] == []
    with pytest.raises(exc.XStreamsError):
        _xstreams._replay_plan(str(tmp_path / "nothing"), [b"a"])
