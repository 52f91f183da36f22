"""Under ``fsync="always"`` a durable store answers a call only once the writes logged
before its reply are durable, through every path that runs commands; the fsync runs
after the store is unlocked and with the GIL released, so threads writing at once share
it (group commit, as redis-server's clients share one fsync per event-loop turn).

Each path is checked through ``Store.log_writes()``: right after the call every write
logged is fsynced under ``always``, while under ``no`` the same call leaves its writes
waiting (so a path that skipped the fsync would fail here). The power-loss side (what
an fsync covers) is tested on the simulated disk: ``rust/xstreams-fuzz/tests/settle.rs``.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import pyarrow as pa
import pytest
import xstreams
from persist_support import NOW
from xstreams import _xstreams

Call = Callable[[xstreams.Store, Any], Any]


def _execute_command(s: xstreams.Store, tmp: Any) -> None:
    s.execute_command("XADD", "s", "*", "f", "v")


def _execute_many(s: xstreams.Store, tmp: Any) -> None:
    s.execute_many([("XADD", "s", "*", "f", "v"), ("XADD", "t", "*", "f", "v")], atomic=False)


def _transaction(s: xstreams.Store, tmp: Any) -> None:
    w = s.watch("s")
    assert s.execute_many([("XADD", "s", "*", "f", "v")], watch=w) is not None


def _client_typed(s: xstreams.Store, tmp: Any) -> None:
    xstreams.Redis(store=s).xadd("s", {"f": "v"})


def _client_pipeline(s: xstreams.Store, tmp: Any) -> None:
    p = xstreams.Redis(store=s).pipeline(transaction=False)
    p.xadd("s", {"f": "v"})
    p.xadd("t", {"f": "v"})
    p.execute()


def _client_command(s: xstreams.Store, tmp: Any) -> None:
    xstreams.Redis(store=s).execute_command("XADD", "s", "*", "f", "v")


def _xadd_batch(s: xstreams.Store, tmp: Any) -> None:
    s.xadd_batch("s", pa.record_batch({"f": ["a", "b"]}))


def _xadd_batch_atomic(s: xstreams.Store, tmp: Any) -> None:
    s.xadd_batch("s", pa.record_batch({"f": ["a", "b"]}), atomic=True)


def _group_read(s: xstreams.Store, tmp: Any) -> None:
    # XREADGROUP writes the group's PEL.
    s.execute_command("XGROUP", "CREATE", "g", "grp", "0", "MKSTREAM")
    s.execute_command("XADD", "g", "*", "f", "v")
    s.flush()  # only the read's own write left to settle
    assert s.xread_arrow({"g": ">"}, group="grp", consumer="c").num_rows == 1


def _blocked_group_read(s: xstreams.Store, tmp: Any) -> None:
    # The read blocks, then an XADD from another thread wakes it and it writes its PEL.
    s.execute_command("XGROUP", "CREATE", "b", "grp", "$", "MKSTREAM")
    writer = threading.Timer(0.05, lambda: s.execute_command("XADD", "b", "*", "f", "v"))
    writer.start()
    got = s.execute_command("XREADGROUP", "GROUP", "grp", "c", "BLOCK", 10_000, "STREAMS", "b", ">")
    writer.join()
    assert got is not None and len(got[0][1]) == 1


def _sweep(s: xstreams.Store, tmp: Any) -> None:
    # The expired key's DEL is logged by the sweep.
    s.set_clock_ms(NOW)
    s.execute_command("SET", "k", "v", "PX", "10")
    s.flush()
    s.advance_clock_ms(1_000)
    s.sweep()


def _rdb_import(s: xstreams.Store, tmp: Any) -> None:
    src = xstreams.Store()
    src.execute_command("XADD", "r", "1-1", "f", "v")
    _xstreams.rdb_export(src, tmp / "dump.rdb")
    assert _xstreams.rdb_import(s, tmp / "dump.rdb")["keys"] == 1


PATHS = [_execute_command, _execute_many, _transaction, _client_typed, _client_pipeline,
         _client_command, _xadd_batch, _xadd_batch_atomic, _group_read,
         _blocked_group_read, _sweep, _rdb_import]  # fmt: skip


@pytest.mark.parametrize("fsync", ["always", "no"])
@pytest.mark.parametrize("call", PATHS, ids=lambda c: c.__name__.lstrip("_"))
def test_a_call_returns_once_its_writes_are_durable(tmp_path, call: Call, fsync: str) -> None:
    s = xstreams.Store(tmp_path / "s", fsync=fsync)
    try:
        before = s.log_writes()
        assert before is not None and before["failed"] is None
        call(s, tmp_path)
        after = s.log_writes()
        assert after["written"] > before["written"], "the call wrote nothing"
        if fsync == "always":
            assert after["durable"] == after["written"], after
        else:
            assert after["durable"] < after["written"], after
    finally:
        s.close()


def test_log_writes_of_other_stores(tmp_path) -> None:
    assert xstreams.Store().log_writes() is None
    s = xstreams.Store(tmp_path / "s", fsync="no")
    s.execute_command("XADD", "s", "*", "f", "v")
    s.flush()
    assert s.log_writes() == {"written": 1, "durable": 1, "failed": None}
    s.close()
    assert s.log_writes() is None
    r = xstreams.Store(tmp_path / "s", read_only=True)
    assert r.log_writes() is None
    r.close()


def test_threads_writing_at_once_under_always(tmp_path) -> None:
    """Every path at once from several threads: no deadlock between the store lock, the
    GIL and the fsync gate, and every write is there and durable at the end."""
    s = xstreams.Store(tmp_path / "s", fsync="always")
    client = xstreams.Redis(store=s)
    each = 60
    errors: list = []

    def work(t: int) -> None:
        try:
            for i in range(each):
                key = f"k{t}"
                if t % 3 == 0:
                    s.execute_command("XADD", key, "*", "i", i)
                elif t % 3 == 1:
                    client.xadd(key, {"i": i})
                else:
                    s.xadd_batch(key, pa.record_batch({"i": [i]}))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a writer thread hangs"
    assert not errors, errors
    w = s.log_writes()
    assert w["written"] == 6 * each and w["durable"] == w["written"], w
    for t in range(6):
        assert s.execute_command("XLEN", f"k{t}") == each
    s.close()
