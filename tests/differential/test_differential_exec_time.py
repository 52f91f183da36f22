"""Differential test of the command time inside MULTI/EXEC.

redis-server takes its time snapshot once per execution unit, and the commands an EXEC
runs are nested in the EXEC's: they all run at one time. So in one transaction every
``XADD *`` ID has the same millisecond part (sequence 0, 1, 2, ...), and a key given a
1 ms TTL at its start is still there, with 1 ms left, at its end -- however long the
transaction takes. A pipeline of the same commands runs each at its own time.

The same transaction (SET, PEXPIRE 1, many ``XADD *``, EXISTS, PTTL) goes to redis-server
(the oracle), to ``xstreams serve`` and to the embedded store (``execute_many`` with
``atomic=True``, and ``xadd_batch(atomic=True)``, the Spark sink's commit); the replies
must be the same once each reply's millisecond is taken relative to the first ID's.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, List, Optional, Tuple

import pytest

from .servers import RedisServer, import_xstreams

#: XADDs per transaction: enough that it lasts several milliseconds on any machine.
N = 30_000


def _commands() -> List[List[Any]]:
    cmds: List[List[Any]] = [["SET", "k", "v"], ["PEXPIRE", "k", 1]]
    cmds += [["XADD", "s", "*", "f", "v"]] * N
    return cmds + [["EXISTS", "k"], ["PTTL", "k"]]


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _shape(replies: List[Any]) -> Tuple[Any, ...]:
    """The XADD IDs as (ms - the first ID's ms, seq), then the EXISTS and PTTL replies
    (SET's and PEXPIRE's are OK and 1 everywhere; redis-py turns them into booleans)."""
    ids = [_text(r).split("-") for r in replies[2 : 2 + N]]
    first = int(ids[0][0])
    rel = [(int(ms) - first, int(seq)) for ms, seq in ids]
    return (rel, replies[2 + N], replies[3 + N])


def _over_redis_py(
    port: int, transaction: bool, cmds: Optional[List[List[Any]]] = None
) -> List[Any]:
    """The replies to ``cmds`` (default: ``_commands()``) sent in one pipeline."""
    import redis

    r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=60)
    try:
        r.flushall()
        pipe = r.pipeline(transaction=transaction)
        for c in _commands() if cmds is None else cmds:
            pipe.execute_command(*c)
        return pipe.execute()
    finally:
        r.close()


@pytest.fixture(scope="module")
def oracle_port(redis_binary: str) -> Iterator[int]:
    with RedisServer(redis_binary) as srv:
        yield srv.port


@pytest.fixture(scope="module")
def serve_port() -> Iterator[int]:
    from server_support import ServerProcess, require_serve

    require_serve()
    with ServerProcess("--loglevel", "warning") as srv:
        yield srv.port


@pytest.fixture(scope="module")
def want(oracle_port: int) -> Tuple[Any, ...]:
    got = _shape(_over_redis_py(oracle_port, transaction=True))
    # What the oracle says, spelled out: one millisecond, the key alive with 1 ms left.
    assert got == ([(0, i) for i in range(N)], 1, 1)
    return got


def test_a_pipeline_runs_at_several_times(oracle_port: int) -> None:
    """The contrast that makes the test meaningful: the same commands outside a
    transaction last long enough to see the clock move (on the oracle itself)."""
    t0 = time.perf_counter()
    got = _shape(_over_redis_py(oracle_port, transaction=False))
    took = time.perf_counter() - t0
    assert got[0][-1][0] > 0, f"one millisecond over {took:.3f} s"
    assert got[1] == 0


def test_exec_over_resp(want: Tuple[Any, ...], serve_port: int) -> None:
    assert _shape(_over_redis_py(serve_port, transaction=True)) == want


def _with_info(port: int) -> List[Any]:
    """The transaction with ``INFO keyspace`` half-way through its XADDs (a command that
    reads the server, which ``xstreams serve`` runs between two parts of the queue), the
    INFO reply taken out."""
    cmds = _commands()
    at = 2 + N // 2
    cmds.insert(at, ["INFO", "keyspace"])
    replies = _over_redis_py(port, transaction=True, cmds=cmds)
    assert "db0" in replies[at]
    return replies[:at] + replies[at + 1 :]


def test_exec_with_info_runs_at_one_time(want: Tuple[Any, ...], oracle_port: int) -> None:
    assert _shape(_with_info(oracle_port)) == want


def test_exec_with_info_over_resp(want: Tuple[Any, ...], serve_port: int) -> None:
    assert _shape(_with_info(serve_port)) == want


def test_atomic_execute_many(want: Tuple[Any, ...]) -> None:
    xs = import_xstreams()
    if xs is None:
        pytest.skip("xstreams is not importable")
    store = xs.Store()
    try:
        assert _shape(store.execute_many(_commands(), atomic=True)) == want
    finally:
        store.close()


def test_atomic_xadd_batch(want: Tuple[Any, ...], tmp_path: Any) -> None:
    """The Spark sink's commit: the rows and the marker, one atomic step in a durable
    store, at one time."""
    xs = import_xstreams()
    if xs is None:
        pytest.skip("xstreams is not importable")
    import pyarrow as pa

    store = xs.Store(str(tmp_path / "store"))
    try:
        res = store.xadd_batch(
            "s",
            pa.table({"f": ["v"] * N}),
            atomic=True,
            after=[[b"XADD", b"marker", b"*", b"batch", b"1"]],
        )
        ids = [_text(i) for i in res.column("id").to_pylist()]
        marker = _text(store.execute_command("XRANGE", "marker", "-", "+")[0][0])
    finally:
        store.close()
    assert _shape(["OK", 1, *ids, 1, 1])[0] == want[0]
    assert marker.split("-")[0] == ids[0].split("-")[0]
