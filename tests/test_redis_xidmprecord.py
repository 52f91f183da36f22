"""XIDMPRECORD: recording an IID for an existing entry (Redis 8.6) -- the "XIDMPRECORD ..."
tests of Redis's tests/unit/type/stream.tcl (xidmprecordCommand in src/t_stream.c),
made exact. The family's overview is in test_redis_idmp.py."""

from __future__ import annotations

import pytest
from support_idmp import counters, idmp, nid, x, xlen
from support_streams import (
    error_of,
)

# --- XIDMPRECORD ---------------------------------------------------------------------


@pytest.mark.parametrize("args", [("mystream", "p1", "i1"), ("mystream", "p1", "i1", "1-1", "x")])
def test_xidmprecord_arity(s, args):
    assert error_of(s, "XIDMPRECORD", *args) == (
        "ERR wrong number of arguments for 'xidmprecord' command"
    )


def test_xidmprecord_parameter_validation(s):
    assert error_of(s, "XIDMPRECORD", "nosuchkey", "p1", "i1", "1-1") == "ERR no such key"
    x(s, "SET", "notastream", "value")
    assert error_of(s, "XIDMPRECORD", "notastream", "p1", "i1", "1-1") == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )
    x(s, "XADD", "mystream", "1-1", "f", "v")
    for bad in ("bad", "1-", "-1", "-", "+", "1-x"):
        assert error_of(s, "XIDMPRECORD", "mystream", "p1", "i1", bad) == (
            "ERR Invalid stream ID specified as stream command argument"
        )
    assert error_of(s, "XIDMPRECORD", "mystream", "", "i1", "1-1") == (
        "ERR producer ID must be non-empty"
    )
    assert error_of(s, "XIDMPRECORD", "mystream", "p1", "", "1-1") == (
        "ERR idempotent ID must be non-empty"
    )
    assert counters(s, "mystream") == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 0,
        "iids-duplicates": 0,
    }


def test_xidmprecord_argument_checks_come_before_the_key_lookup(s):
    assert error_of(s, "XIDMPRECORD", "nosuchkey", "p1", "i1", "bad") == (
        "ERR Invalid stream ID specified as stream command argument"
    )
    assert error_of(s, "XIDMPRECORD", "nosuchkey", "", "i1", "1-1") == (
        "ERR producer ID must be non-empty"
    )
    assert error_of(s, "XIDMPRECORD", "nosuchkey", "p1", "", "1-1") == (
        "ERR idempotent ID must be non-empty"
    )


def test_xidmprecord_with_binary_safe_iid(s):
    id1 = x(s, "XADD", "s", "*", "f", "v")
    iid = b"\x00\x01\x02\xff"
    assert x(s, "XIDMPRECORD", "s", "p1", iid, id1) == b"OK"
    assert idmp(s, "p1", iid, "f", "v2") == id1


def test_xidmprecord_with_maximum_length_iid(s):
    id1 = x(s, "XADD", "s", "*", "f", "v")
    assert x(s, "XIDMPRECORD", "s", "p1", "x" * 65536, id1) == b"OK"
    assert idmp(s, "p1", "x" * 65536, "f", "v2") == id1


def test_xidmprecord_with_unicode_long_and_special_ids(s):
    id1 = x(s, "XADD", "s", "*", "f", "v")
    for pid, iid in (("producer-世界", "req-héllo"), ("p" * 1000, "i1"), ("p1", "key:value")):
        assert x(s, "XIDMPRECORD", "s", pid, iid, id1) == b"OK"
        assert idmp(s, pid, iid, "f", "v2") == id1
    assert xlen(s) == 1


def test_xidmprecord_message_must_exist_in_stream(s):
    x(s, "XADD", "s", "1-1", "f", "v")
    x(s, "XADD", "s", "2-1", "f", "v")
    x(s, "XDEL", "s", "2-1")
    for missing in ("999-999", "2-1", "0-0", "1-0", "1"):
        assert error_of(s, "XIDMPRECORD", "s", "p1", "i1", missing) == (
            "ERR No such message in stream"
        )
    assert x(s, "XIDMPRECORD", "s", "p1", "i1", "1-1") == b"OK"


def test_xidmprecord_then_deduplication_works(s):
    id1 = x(s, "XADD", "s", "*", "f", "v")
    assert x(s, "XIDMPRECORD", "s", "p1", "req-1", id1) == b"OK"
    assert idmp(s, "p1", "req-1", "f", "v2") == id1
    assert xlen(s) == 1


def test_xidmprecord_idempotent_and_counters(s):
    id1 = x(s, "XADD", "s", "*", "f", "v")
    assert x(s, "XIDMPRECORD", "s", "p1", "req-1", id1) == b"OK"
    assert x(s, "XIDMPRECORD", "s", "p1", "req-1", id1) == b"OK"
    # A recorded IID counts as added; finding it again is not a duplicate.
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 1,
        "iids-added": 1,
        "iids-duplicates": 0,
    }
    assert idmp(s, "p1", "req-1", "f", "v2") == id1
    assert counters(s)["iids-duplicates"] == 1


def test_xidmprecord_conflict_same_pid_iid_different_stream_id(s):
    id1 = x(s, "XADD", "s", "*", "f", "v1")
    id2 = x(s, "XADD", "s", "*", "f", "v2")
    assert x(s, "XIDMPRECORD", "s", "p1", "i1", id1) == b"OK"
    assert error_of(s, "XIDMPRECORD", "s", "p1", "i1", id2) == (
        "ERR IID already exists for this producer with a different stream ID"
    )
    assert idmp(s, "p1", "i1", "f", "v") == id1


def test_xidmprecord_multiple_producers(s):
    id1 = x(s, "XADD", "s", "*", "f", "v1")
    id2 = x(s, "XADD", "s", "*", "f", "v2")
    assert x(s, "XIDMPRECORD", "s", "p1", "i1", id1) == b"OK"
    assert x(s, "XIDMPRECORD", "s", "p2", "i2", id2) == b"OK"
    assert idmp(s, "p1", "i1", "f", "dup1") == id1
    assert idmp(s, "p2", "i2", "f", "dup2") == id2
    assert idmp(s, "p1", "i2", "f", "new") == nid(2)


def test_xidmprecord_respects_maxsize(s):
    ids = [x(s, "XADD", "s", "*", "f", i) for i in range(3)]
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 2)
    for n, entry_id in enumerate(ids):
        assert x(s, "XIDMPRECORD", "s", "p1", f"i{n}", entry_id) == b"OK"
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 2,
        "iids-added": 3,
        "iids-duplicates": 0,
    }
    assert idmp(s, "p1", "i0", "f", "v") == nid(3)
    assert idmp(s, "p1", "i2", "f", "v") == ids[2]


def test_xidmprecord_iid_expires_by_the_id_it_maps_to(s):
    # An IID recorded for an old entry expires at the next sweep, whatever the clock.
    x(s, "XADD", "s", "1-1", "f", "old")
    new_id = x(s, "XADD", "s", "*", "f", "new")
    assert x(s, "XIDMPRECORD", "s", "p1", "old", "1-1") == b"OK"
    assert x(s, "XIDMPRECORD", "s", "p1", "new", new_id) == b"OK"
    s.sweep()
    assert counters(s)["iids-tracked"] == 1
    assert idmp(s, "p1", "new", "f", "v") == new_id
    assert idmp(s, "p1", "old", "f", "v") == nid(1)
