"""XADD IDMPAUTO (Redis 8.6): the IID is an order-independent 128-bit hash of the
field/value pairs (createIdempotencyHash in src/t_stream.c); field names matter, it is
binary-safe, and ``xstreams.auto_iid`` returns exactly the IID redis-server computes
(known-answer vectors checked against redis-server). Ports the "XADD IDMPAUTO ..." tests
of Redis's tests/unit/type/stream.tcl; the family's overview is in test_redis_idmp.py."""

from __future__ import annotations

import pytest
import xstreams
from support_idmp import auto, counters, idmp, nid, x, xlen
from support_streams import (
    error_of,
)

# --- IDMPAUTO ------------------------------------------------------------------------


def test_xadd_idmpauto_basic_deduplication(s):
    id1 = auto(s, "p1", "amount", "100", "currency", "USD")
    assert id1 == nid(0)
    assert auto(s, "p1", "amount", "100", "currency", "USD") == id1
    assert xlen(s) == 1
    assert auto(s, "p1", "amount", "200", "currency", "USD") == nid(1)
    assert xlen(s) == 2


def test_xadd_idmpauto_deduplicates_regardless_of_field_order(s):
    id1 = auto(s, "p1", "field1", "a", "field2", "b", "field3", "c")
    assert auto(s, "p1", "field2", "b", "field3", "c", "field1", "a") == id1
    assert auto(s, "p1", "field3", "c", "field1", "x", "field2", "b") == nid(1)
    assert xlen(s) == 2
    # The stored entry keeps the fields in the order of the first call.
    assert x(s, "XRANGE", "s", "-", "+")[0] == [
        id1,
        [b"field1", b"a", b"field2", b"b", b"field3", b"c"],
    ]


def test_xadd_idmpauto_different_field_value_pairs(s):
    ids = [
        auto(s, "p1", "user", u, "action", a)
        for u, a in (("alice", "login"), ("bob", "login"), ("alice", "logout"))
    ]
    assert ids == [nid(0), nid(1), nid(2)]


def test_xadd_idmpauto_single_and_many_pairs(s):
    assert auto(s, "p1", "status", "active") == nid(0)
    assert auto(s, "p1", "status", "active") == nid(0)
    assert auto(s, "p1", "status", "inactive") == nid(1)
    many = [v for i in range(1, 9) for v in (f"f{i}", f"v{i}")]
    assert auto(s, "p1", *many) == nid(2)
    assert auto(s, "p1", *many) == nid(2)
    assert auto(s, "p1", *many[:-1], "different") == nid(3)
    assert xlen(s) == 4


def test_xadd_idmpauto_binary_unicode_long_empty_and_numeric_values(s):
    assert auto(s, "p1", "field", b"\x00\x01\x02\xff") == nid(0)
    assert auto(s, "p1", "field", b"\x00\x01\x02\xff") == nid(0)
    assert auto(s, "p1", "message", "hello世界") == nid(1)
    assert auto(s, "p1", "message", "hello世界") == nid(1)
    assert auto(s, "p1", "message", "héllo") == nid(2)
    assert auto(s, "p1", "data", "x" * 10000) == nid(3)
    assert auto(s, "p1", "data", "x" * 10000) == nid(3)
    assert auto(s, "p1", "field", "") == nid(4)
    assert auto(s, "p1", "field", "") == nid(4)
    assert auto(s, "p1", "field", "value") == nid(5)
    assert auto(s, "p1", 123, "456", 789, "012") == nid(6)
    assert auto(s, "p1", "123", 456, "789", "012") == nid(6)
    assert auto(s, "p1", 123, "999", 789, "012") == nid(7)
    assert xlen(s) == 8


def test_xadd_idmpauto_field_names_matter(s):
    assert auto(s, "p1", "field1", "value") == nid(0)
    assert auto(s, "p1", "field2", "value") == nid(1)
    # The field length separates field from value: "fv"/"" is not "f"/"v".
    assert auto(s, "p1", "f", "v") == nid(2)
    assert auto(s, "p1", "fv", "") == nid(3)
    assert auto(s, "p1", "", "fv") == nid(4)
    # Swapping a field with its value is another entry.
    assert auto(s, "p1", "value", "field1") == nid(5)


def test_xadd_idmpauto_with_trim_and_nomkstream_options(s):
    assert auto(s, "p1", "field", "value", opts=("NOMKSTREAM",)) is None
    assert x(s, "EXISTS", "s") == 0
    id1 = auto(s, "p1", "field", "value1", opts=("MAXLEN", "~", 100))
    id2 = auto(s, "p1", "field", "value2", opts=("MINID", "~", "1000000000-0"))
    assert auto(s, "p1", "field", "value1", opts=("MAXLEN", "~", 100)) == id1
    assert auto(s, "p1", "field", "value2", opts=("KEEPREF", "NOMKSTREAM")) == id2
    assert x(s, "XADD", "s", "KEEPREF", "IDMPAUTO", "p1", "*", "field", "value1") == id1
    assert x(s, "XADD", "s", "IDMPAUTO", "p1", "KEEPREF", "*", "field", "value3") == nid(2)
    assert xlen(s) == 3


def test_xadd_idmpauto_with_consumer_groups(s):
    x(s, "XADD", "s", "*", "initial", "value")
    x(s, "XGROUP", "CREATE", "s", "mygroup", "0")
    id1 = auto(s, "p1", "event", "login", "user", "alice")
    auto(s, "p1", "event", "logout", "user", "bob")
    assert auto(s, "p1", "event", "login", "user", "alice") == id1
    reply = x(s, "XREADGROUP", "GROUP", "mygroup", "c1", "COUNT", 10, "STREAMS", "s", ">")
    assert len(reply[0][1]) == 3


def test_xadd_idmpauto_multiple_producers(s):
    ids = [auto(s, app, "event", "login", "user", "alice") for app in ("app1", "app2", "app3")]
    assert ids == [nid(0), nid(1), nid(2)]
    assert auto(s, "app1", "event", "login", "user", "alice") == ids[0]
    assert auto(s, "app2", "user", "alice", "event", "login") == ids[1]
    assert counters(s) == {
        "pids-tracked": 3,
        "iids-tracked": 3,
        "iids-added": 3,
        "iids-duplicates": 2,
    }


# Known-answer vectors: these IIDs were checked against redis-server (a XIDMPRECORD of
# the candidate IID for another entry fails with "IID already exists ... different
# stream ID" after XADD ... IDMPAUTO with the same fields).
AUTO_IID_VECTORS = [
    ([b"f", b"v"], "6e95729ee727f0814aedffba55730079"),
    ([b"amount", b"100", b"currency", b"USD"], "e11c9a7017ea4839b25824062c8d8c50"),
    ([b"currency", b"USD", b"amount", b"100"], "e11c9a7017ea4839b25824062c8d8c50"),
    ([b"field", b""], "9d0899c463e3e6243812ff469716786e"),
    ([b"f", b"v", b"f", b"v"], "9a79073b2d2a35cba229f103f1b26a64"),
    ([b"fv", b""], "e3567d0a61d4ef6b654a49dbcd9ddb90"),
    ([b"", b"fv"], "71d8f7e747d44c288e551cd032b3179a"),
    ([b"\x00\x01", b"\xff\x00"], "d46334e6570f7cab664c039fcf52c459"),
    ([b"x" * 1000, b"y" * 70000], "1c9e64c4fa0ac61c7eafceef50798f6b"),
    ([b"123", b"456", b"789", b"012"], "5bb40159537d12790f64336f5a4ed98a"),
]


@pytest.mark.parametrize("fields, expected", AUTO_IID_VECTORS)
def test_auto_iid_known_answers(fields, expected):
    assert xstreams.auto_iid(fields).hex() == expected


@pytest.mark.parametrize("fields, _expected", AUTO_IID_VECTORS)
def test_auto_iid_is_the_iid_idmpauto_records(s, fields, _expected):
    iid = xstreams.auto_iid(fields)
    assert len(iid) == 16
    id1 = auto(s, "p", *fields)
    other = x(s, "XADD", "s", "*", "z", "z")
    # The auto IID is the one tracked: recording it for another entry conflicts...
    assert error_of(s, "XIDMPRECORD", "s", "p", iid, other) == (
        "ERR IID already exists for this producer with a different stream ID"
    )
    # ... recording it for the same entry is a no-op, and IDMP with it deduplicates.
    assert x(s, "XIDMPRECORD", "s", "p", iid, id1) == b"OK"
    assert counters(s)["iids-tracked"] == 1
    assert idmp(s, "p", iid, "any", "thing") == id1


def test_auto_iid_recorded_first_makes_idmpauto_deduplicate(s):
    id1 = x(s, "XADD", "s", "*", "k", "v")
    assert x(s, "XIDMPRECORD", "s", "p", xstreams.auto_iid([b"b", b"2", b"a", b"1"]), id1) == (
        b"OK"
    )
    assert auto(s, "p", "a", "1", "b", "2") == id1
    assert auto(s, "p", "a", "1", "b", "3") == nid(1)


def test_auto_iid_properties():
    a = xstreams.auto_iid([b"a", b"1", b"b", b"2", b"c", b"3"])
    assert xstreams.auto_iid([b"c", b"3", b"a", b"1", b"b", b"2"]) == a
    assert xstreams.auto_iid([b"a", b"1", b"b", b"2", b"c", b"4"]) != a
    assert xstreams.auto_iid([b"1", b"a", b"2", b"b", b"3", b"c"]) != a
    assert xstreams.auto_iid([b"\x00", b"\x00"]) != xstreams.auto_iid([b"\x00\x00", b""])
