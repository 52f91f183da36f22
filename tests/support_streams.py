"""Shared helpers for the test_redis_*.py ports of Redis's own stream tests.

Every helper drives an in-process ``xstreams.Store`` whose clock is pinned, so idle
times, ``*`` ids, delivery times and IDMP expiry are exact numbers.  Replies are the
raw RESP2 (or RESP3) shapes the store returns: bytes, int, list, dict, None.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional

import xstreams

# A realistic Unix time in ms: ids made by "*" are NOW-0, NOW-1, ... while pinned.
NOW = 1_700_000_000_000
LLONG_MAX = 9223372036854775807
UINT64_MAX = 18446744073709551615
MAX_ID = f"{UINT64_MAX}-{UINT64_MAX}"


def new_store(config: Optional[Dict[str, Any]] = None, clock: int = NOW) -> xstreams.Store:
    """A fresh store with its clock pinned at ``clock``."""
    return xstreams.Store(config=config or {}, clock_ms=clock)


def b(value: Any) -> bytes:
    """bytes of a str/int/bytes value (for building expected replies)."""
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def error_of(store: xstreams.Store, *args: Any) -> str:
    """The full error line (code included, e.g. "ERR syntax error") a command fails with."""
    try:
        reply = store.execute_command(*args)
    except xstreams.ResponseError as exc:
        return exc.reply
    raise AssertionError(f"{args!r} did not fail; it replied {reply!r}")


def kv_dict(flat: List[Any]) -> Dict[str, Any]:
    """A RESP2 flat [k1, v1, k2, v2, ...] map as a dict with str keys."""
    assert len(flat) % 2 == 0, flat
    return {k.decode(): v for k, v in zip(flat[::2], flat[1::2])}


def xinfo_stream(store: xstreams.Store, key: str) -> Dict[str, Any]:
    return kv_dict(store.execute_command("XINFO", "STREAM", key))


def xinfo_full(store: xstreams.Store, key: str, *extra: Any) -> Dict[str, Any]:
    """XINFO STREAM key FULL with the groups (and their consumers) turned into dicts."""
    info = kv_dict(store.execute_command("XINFO", "STREAM", key, "FULL", *extra))
    groups = []
    for raw in info["groups"]:
        group = kv_dict(raw)
        group["consumers"] = [kv_dict(c) for c in group["consumers"]]
        groups.append(group)
    info["groups"] = groups
    return info


def full_group(store: xstreams.Store, key: str, index: int = 0) -> Dict[str, Any]:
    return xinfo_full(store, key)["groups"][index]


def full_group_keys(store: xstreams.Store, key: str, index: int = 0) -> List[str]:
    """The field names of one group of XINFO STREAM FULL, in reply order."""
    raw = store.execute_command("XINFO", "STREAM", key, "FULL")
    info = kv_dict(raw)
    return [k.decode() for k in info["groups"][index][::2]]


def xinfo_groups(store: xstreams.Store, key: str) -> List[Dict[str, Any]]:
    return [kv_dict(g) for g in store.execute_command("XINFO", "GROUPS", key)]


def xinfo_consumers(store: xstreams.Store, key: str, group: str) -> List[Dict[str, Any]]:
    return [kv_dict(c) for c in store.execute_command("XINFO", "CONSUMERS", key, group)]


def pending(store: xstreams.Store, key: str, group: str, *extra: Any) -> List[list]:
    """XPENDING key group - + 1000 [extra...]: [[id, consumer, idle, count], ...]."""
    return store.execute_command("XPENDING", key, group, "-", "+", 1000, *extra)


def pending_count(store: xstreams.Store, key: str, group: str) -> int:
    return store.execute_command("XPENDING", key, group)[0]


def ids_of(entries: Optional[List[list]]) -> List[bytes]:
    return [e[0] for e in entries or []]


def add_entries(store: xstreams.Store, key: str, n: int, start: int = 1) -> None:
    """XADD key <i>-0 f v<i> for i in start..start+n-1."""
    for i in range(start, start + n):
        store.execute_command("XADD", key, f"{i}-0", "f", f"v{i}")


def read_all(store: xstreams.Store, key: str, group: str, consumer: str, count: int = 0):
    args = ["XREADGROUP", "GROUP", group, consumer]
    if count:
        args += ["COUNT", count]
    return store.execute_command(*args, "STREAMS", key, ">")


class Blocked:
    """Runs one (blocking) command on a thread; the store releases the GIL while it waits."""

    def __init__(self, store: xstreams.Store, *args: Any, protocol: int = 2) -> None:
        self.result: Any = None
        self.error: Optional[BaseException] = None
        self.started = time.monotonic()
        self.finished: Optional[float] = None
        self._thread = threading.Thread(target=self._run, args=(store, args, protocol), daemon=True)
        self._thread.start()
        time.sleep(0.15)  # let it reach the blocked state

    def _run(self, store: xstreams.Store, args: tuple, protocol: int) -> None:
        try:
            self.result = store.execute_command(*args, protocol=protocol)
        except BaseException as exc:  # noqa: BLE001 - reported by wait()
            self.error = exc
        self.finished = time.monotonic()

    @property
    def blocked(self) -> bool:
        return self._thread.is_alive()

    @property
    def elapsed(self) -> float:
        assert self.finished is not None
        return self.finished - self.started

    def wait(self, timeout: float = 5.0) -> Any:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "command still blocked"
        if self.error is not None:
            raise self.error
        return self.result
