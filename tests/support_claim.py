"""Helpers shared by the XREADGROUP ... CLAIM test files (test_redis_claim*.py): the
claiming read and a group whose consumer has read some entries."""

from __future__ import annotations

from support_streams import add_entries, read_all


def x(store, *args, **kw):
    return store.execute_command(*args, **kw)


def claim_read(store, consumer, min_idle, *streams_and_ids, group="g", extra=()):
    """XREADGROUP GROUP <group> <consumer> [extra...] CLAIM <min_idle> STREAMS ..."""
    return x(
        store,
        "XREADGROUP",
        "GROUP",
        group,
        consumer,
        *extra,
        "CLAIM",
        min_idle,
        "STREAMS",
        *streams_and_ids,
    )


def setup_read(store, n=2, key="s", consumer="c1", count=0):
    """n entries <i>-0 f v<i>, group g at 0, consumer reads (all or COUNT)."""
    add_entries(store, key, n)
    x(store, "XGROUP", "CREATE", key, "g", "0")
    read_all(store, key, "g", consumer, count)
