"""A reader blocked in XREADGROUP or XREAD BLOCK on a stream whose key expires gets what
redis-server 8.8 gives it, on redis-server itself (redis-py), through ``xstreams serve``
(redis-py) and on an in-process ``xstreams.Store`` (its blocking ``execute_command``):

* the key expires while nobody sends a command (the active expiry removes it): XREADGROUP
  fails with NOGROUP at once, XREAD keeps waiting until its timeout;
* the key has expired and a command touches it first (lazy expiry; redis-server with
  ``DEBUG SET-ACTIVE-EXPIRE 0``): an XADD recreates the stream, so XREADGROUP fails with
  NOGROUP (the group went with the old key) and XREAD gets the new entry.

What redis-server answers is checked too when a redis-server binary is available
(``$XSTREAMS_REDIS_SERVER``, 8.8 in CI): the expectations are its behaviour.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Callable, Iterator, List

import pytest
import xstreams
from differential.servers import RedisServer, find_redis_server
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")

NOGROUP = "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"
_ID = re.compile(rb"^\d+-\d+$")


def _ids(reply: Any) -> List[bytes]:
    """Every entry ID in a (raw or redis-py parsed) read reply."""
    out: List[bytes] = []

    def walk(v: Any) -> None:
        if isinstance(v, bytes) and _ID.match(v):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(reply)
    return out


class Backend:
    """``call(*args)`` runs a command on a fresh connection (so a blocked call does not
    hold the one the test writes with); ``lazy_only()`` turns the active expiry off where
    the backend can."""

    def __init__(self, call: Callable[..., Any], lazy_only: Callable[[], bool]) -> None:
        self.call = call
        self.lazy_only = lazy_only


def _outcome(call: Callable[..., Any], *args: Any) -> Any:
    try:
        reply = call(*args)
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return ("error", str(e).split("\n")[0])
    ids = _ids(reply)
    return ("entries", ids) if ids else ("nil",)


def _redis_backend(port: int, debug: bool) -> Backend:
    def call(*args: Any) -> Any:
        c = redis.Redis(port=port)
        try:
            return c.execute_command(*args)
        finally:
            c.close()

    def lazy_only() -> bool:
        if not debug:
            return False
        call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        return True

    return Backend(call, lazy_only)


@pytest.fixture(params=["redis-server", "serve", "store"])
def backend(request) -> Iterator[Backend]:
    if request.param == "redis-server":
        binary = find_redis_server()
        if binary is None:
            pytest.skip("no redis-server binary")
        with RedisServer(binary, ["--enable-debug-command", "yes"]) as srv:
            yield _redis_backend(srv.port, debug=True)
    elif request.param == "serve":
        require_serve()
        with ServerProcess("--loglevel", "warning", debug=True) as srv:
            yield _redis_backend(srv.port, debug=False)
    else:
        store = xstreams.Store()
        yield Backend(lambda *a: store.execute_command(*a), lambda: False)
        store.close()


def _blocked(backend: Backend, args: List[str], before_reply: Callable[[], None]) -> tuple:
    """Run ``args`` (a blocking read) in a thread, call ``before_reply`` meanwhile; return
    (outcome, seconds the call took)."""
    box: dict = {}

    def run() -> None:
        t0 = time.monotonic()
        box["out"] = _outcome(backend.call, *args)
        box["secs"] = time.monotonic() - t0

    th = threading.Thread(target=run)
    th.start()
    time.sleep(0.2)
    before_reply()
    th.join(timeout=30)
    assert not th.is_alive()
    return box["out"], box["secs"]


XREADGROUP = ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "3000", "STREAMS", "s", ">"]


def _stream_with_group(b: Backend, pexpire_ms: int) -> None:
    b.call("XADD", "s", "1-1", "f", "v")
    b.call("XGROUP", "CREATE", "s", "g", "$")
    b.call("PEXPIRE", "s", pexpire_ms)


def test_xreadgroup_fails_when_the_key_expires_actively(backend):
    _stream_with_group(backend, 400)
    out, secs = _blocked(backend, XREADGROUP, lambda: None)
    assert out == ("error", NOGROUP)
    assert secs < 2.0  # when the key expires, not at the 3 s timeout
    assert backend.call("EXISTS", "s") == 0


def test_xread_keeps_waiting_when_the_key_expires_actively(backend):
    backend.call("XADD", "s", "1-1", "f", "v")
    backend.call("PEXPIRE", "s", 300)
    out, secs = _blocked(backend, ["XREAD", "BLOCK", "1200", "STREAMS", "s", "$"], lambda: None)
    assert out == ("nil",)
    assert secs >= 1.1
    assert backend.call("EXISTS", "s") == 0


def _xadd_after_expiry(b: Backend) -> Callable[[], None]:
    def act() -> None:
        time.sleep(0.5)
        assert b.call("XADD", "s", "2-1", "f", "w") in (b"2-1", "2-1")

    return act


def test_xreadgroup_after_lazy_expiry_and_a_new_stream(backend):
    backend.lazy_only()
    _stream_with_group(backend, 300)
    out, _ = _blocked(backend, XREADGROUP, _xadd_after_expiry(backend))
    assert out == ("error", NOGROUP)
    assert backend.call("XLEN", "s") == 1


def test_xread_after_lazy_expiry_gets_the_new_stream(backend):
    backend.lazy_only()
    backend.call("XADD", "s", "1-1", "f", "v")
    backend.call("PEXPIRE", "s", 300)
    args = ["XREAD", "BLOCK", "3000", "STREAMS", "s", "$"]
    out, _ = _blocked(backend, args, _xadd_after_expiry(backend))
    assert out == ("entries", [b"2-1"])
