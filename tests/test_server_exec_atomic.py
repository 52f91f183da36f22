"""MULTI/EXEC is atomic however its queue is made: no other client's command runs
between two of its commands, also when the queue holds connection-level commands that
read or change the server (INFO, CONFIG). redis-server runs an EXEC as one step of its
event loop; ``xstreams serve`` must give the same guarantee with its connections on
several threads.

Each case runs against ``xstreams serve`` and, when a redis-server is at hand
(``$XSTREAMS_REDIS_SERVER``), against it too: the same assertions hold on both.

The check: one client queues ``XADD s * a <i>`` / a connection-level command / ``XADD s *
b <i>`` and EXECs it many times while other clients append to ``s`` as fast as they can.
Every transaction's two entries must be next to each other in the stream. An EXEC run in
parts (the failure this guards against) lets the other clients' entries fall between
them. LASTSAVE, which leaves the store alone, is the control: its queue always ran as
one step.
"""

from __future__ import annotations

import datetime
import threading
import time
from typing import Iterator, List, Tuple

import pytest
from differential.servers import RedisServer, find_redis_server
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")

ROUNDS = 1000
WRITERS = 2

# The connection-level command put between the two XADDs of each transaction.
MIDDLE = {
    "info": ("INFO", "keyspace"),
    "config-get": ("CONFIG", "GET", "maxmemory"),
    "config-set": ("CONFIG", "SET", "maxmemory-policy", "noeviction"),
    "lastsave": ("LASTSAVE",),
}


@pytest.fixture(scope="module", params=["xstreams", "redis-server"])
def port(request) -> Iterator[int]:
    if request.param == "xstreams":
        require_serve()
        with ServerProcess() as srv:
            yield srv.port
        return
    binary = find_redis_server()
    if not binary:
        pytest.skip("no redis-server binary (set XSTREAMS_REDIS_SERVER)")
    with RedisServer(binary) as srv:
        yield srv.port


def _hammer(port: int, stop: threading.Event, errors: List[BaseException]) -> None:
    c = redis.Redis(port=port)
    try:
        while not stop.is_set():
            p = c.pipeline(transaction=False)
            for _ in range(20):
                p.xadd("s", {"w": "1"})
            p.execute()
    except BaseException as e:  # noqa: BLE001 - reported by the test
        errors.append(e)
    finally:
        c.close()


@pytest.mark.parametrize("middle", sorted(MIDDLE))
def test_exec_with_connection_commands_is_atomic(port: int, middle: str) -> None:
    r = redis.Redis(port=port)
    r.delete("s")
    stop = threading.Event()
    errors: List[BaseException] = []
    writers = [
        threading.Thread(target=_hammer, args=(port, stop, errors), daemon=True)
        for _ in range(WRITERS)
    ]
    for t in writers:
        t.start()
    pairs: List[Tuple[bytes, bytes]] = []
    try:
        for i in range(ROUNDS):
            p = r.pipeline(transaction=True)
            p.xadd("s", {"a": str(i)})
            p.execute_command(*MIDDLE[middle])
            p.xadd("s", {"b": str(i)})
            first, _, second = p.execute()
            pairs.append((first, second))
    finally:
        stop.set()
        for t in writers:
            t.join(timeout=30)
    assert not errors, errors
    ids = [e[0] for e in r.xrange("s")]
    place = {entry_id: n for n, entry_id in enumerate(ids)}
    others = len(ids) - 2 * ROUNDS
    assert others > 0, "the other clients wrote nothing: the check proves nothing"
    split = [(a, b) for a, b in pairs if place[b] != place[a] + 1]
    assert not split, (
        f"{len(split)} of {ROUNDS} transactions had another client's entries between "
        f"their two XADDs (first: {split[0]}; {others} entries from the other clients)"
    )
    r.close()


def test_exec_with_connection_commands_replies_in_order(port: int) -> None:
    """The replies of a mixed queue come back in queue order, each its own command's."""
    r = redis.Redis(port=port, decode_responses=True)
    r.delete("k2")
    p = r.pipeline(transaction=True)
    p.xadd("k2", {"f": "v"}, id="1-1")
    p.execute_command("CONFIG", "GET", "maxmemory-policy")
    p.xlen("k2")
    p.execute_command("LASTSAVE")
    p.xadd("k2", {"f": "v"}, id="2-1")
    out = p.execute()
    assert out[0] == "1-1"
    assert out[1] in (["maxmemory-policy", "noeviction"], {"maxmemory-policy": "noeviction"})
    assert out[2] == 1
    assert isinstance(out[3], datetime.datetime)  # LASTSAVE, as redis-py reads it
    assert out[4] == "2-1"
    r.close()


def test_blocked_reader_is_served_after_the_whole_exec(port: int) -> None:
    """A reader blocked on the stream gets the entries of every part of the EXEC at once:
    redis-server serves blocked clients after the EXEC, not between its commands."""
    r = redis.Redis(port=port)
    r.delete("b")
    got: List[object] = []

    def reader() -> None:
        c = redis.Redis(port=port, socket_timeout=20)
        got.append(c.xread({"b": "$"}, block=10_000))
        c.close()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    while int(r.info("clients")["blocked_clients"]) != 1:
        assert time.monotonic() < deadline, "the reader did not block"
        time.sleep(0.002)
    p = r.pipeline(transaction=True)
    p.xadd("b", {"a": "1"})
    p.execute_command("INFO", "keyspace")
    p.xadd("b", {"b": "2"})
    first, _, second = p.execute()
    t.join(timeout=20)
    assert got, "the reader got no reply"
    [(key, entries)] = got[0]
    assert key == b"b"
    assert [e[0] for e in entries] == [first, second]
    r.close()
