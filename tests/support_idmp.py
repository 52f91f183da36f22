"""Helpers shared by the IDMP test files (test_redis_idmp*.py, test_redis_xidmprecord.py,
test_redis_xcfgset.py): commands on a pinned-clock store and the IDMP counters of XINFO
STREAM."""

from __future__ import annotations

from support_streams import NOW, xinfo_stream


def x(store, *args, **kw):
    return store.execute_command(*args, **kw)


def nid(seq, ms=None):
    """The id "*" generates while the clock is pinned: <ms>-<seq>."""
    return f"{NOW if ms is None else ms}-{seq}".encode()


def idmp(store, pid, iid, *fields, key="s", opts=()):
    return x(store, "XADD", key, *opts, "IDMP", pid, iid, "*", *fields)


def auto(store, pid, *fields, key="s", opts=()):
    return x(store, "XADD", key, *opts, "IDMPAUTO", pid, "*", *fields)


def counters(store, key="s"):
    info = xinfo_stream(store, key)
    return {k: info[k] for k in ("pids-tracked", "iids-tracked", "iids-added", "iids-duplicates")}


def xlen(store, key="s"):
    return x(store, "XLEN", key)
