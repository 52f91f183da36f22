"""Idempotent XADD (Redis 8.6): IDMP, IDMPAUTO, XIDMPRECORD, XCFGSET and the IDMP fields
of XINFO STREAM -- ports of Redis's own tests, made exact, plus the points of our issue.
This file holds the syntax, the IDMP basics, producers and keyspace tracking; the rest
of the family is in test_redis_xidmprecord.py, test_redis_idmpauto.py,
test_redis_idmp_expiry.py, test_redis_xcfgset.py and test_redis_idmp_xinfo.py (shared
helpers: support_idmp.py).

Guards the behaviours checked by the "XADD IDMP ...", "XADD IDMPAUTO ...",
"XIDMPRECORD ...", "XIDMP ...", "XCFGSET ...", "XINFO STREAM ... iids/pids ..." and
"CONFIG SET stream-idmp-*" tests of Redis's tests/unit/type/stream.tcl, with the
semantics of src/t_stream.c (streamParseAddOrTrimArgsOrReply, xaddCommand,
idmpLookupAndReply, idmpInsertEntry, idmpEvictOldestEntry, handleExpiredIdmpEntries,
createIdempotencyHash, xidmprecordCommand, xcfgsetCommand, xinfoReplyWithStreamInfo)
and the IDMP pull request notes (shared/seeds/004_*):

* (pid, iid) is looked up before anything else: a duplicate returns the original id
  even when the fields differ, when that entry was deleted, when the stream's ids are
  exhausted, and it neither appends nor trims;
* each producer has its own map, capped at IDMP-MAXSIZE (oldest evicted first);
* an IID expires by the milliseconds of the stream id it maps to, once that is
  IDMP-DURATION seconds old (the periodic sweep, ``Store.sweep()`` here);
* XCFGSET clears every map only when a value changes; iids-added and iids-duplicates
  are lifetime counters that survive it; the defaults are taken from the config when
  the stream is created;
* IDMPAUTO's IID is an order-independent 128-bit hash of the field/value pairs:
  field names matter, it is binary-safe, and ``xstreams.auto_iid`` returns exactly the
  IID redis-server computes (known-answer vectors checked against redis-server).

The clock is pinned, so "*" ids are NOW-0, NOW-1, ... and expiry is exact: where Redis
sleeps 2.5 s and polls, these tests move the clock and call sweep().  Skipped Redis
tests (persistence, replication, DEBUG, DUMP/RESTORE, COPY/RENAME/MOVE/SWAPDB, several
databases): "XADD IDMP persists in RDB", "XADD IDMP set in AOF", "XIDMPRECORD AOF
rewrite restores IDMP", "XIDMPRECORD AOF rewrite emits XIDMPRECORD for stream with IDMP
from XIDMPRECORD only", "XADD IDMP multiple producers persistence in RDB", "XADD IDMP
cron expiration works after RDB load", "XADD IDMP tracking survives SWAPDB", "XADD IDMP
tracking cleared after FLUSHALL across all databases", "XADD IDMP tracking survives
RENAME", "XADD IDMP tracking correct after RENAME overwrites IDMP stream", "XADD IDMP
tracking survives COPY", "XADD IDMP tracking correct after COPY REPLACE overwrites IDMP
stream", "XADD IDMP tracking survives MOVE", "XADD IDMP tracking survives RESTORE",
"XADD IDMPAUTO persists in RDB", "XCFGSET configuration persists in RDB", "XCFGSET
configuration in AOF", "XINFO STREAM iids-added persists in RDB", "XADD IDMP tracking
works with diskless replication (swapdb mode)".
"""

from __future__ import annotations

import threading

import pytest
import xstreams
from support_idmp import auto, counters, idmp, nid, x, xlen
from support_streams import (
    MAX_ID,
    NOW,
    error_of,
)

# --- syntax --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("IDMP", "p1", "*", "f", "v"),
            "ERR Invalid stream ID specified as stream command argument",
        ),
        (
            ("IDMP", "p1", "iid1", "1-1", "f", "v"),
            "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs",
        ),
        (
            ("IDMP", "p1", "iid1", "1-*", "f", "v"),
            "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs",
        ),
        (
            ("IDMP", "p1", "iid1", "IDMP", "p2", "iid2", "*", "f", "v"),
            "ERR syntax error, IDMP/IDMPAUTO specified multiple times",
        ),
        (
            ("IDMPAUTO", "p1", "IDMP", "p2", "iid2", "*", "f", "v"),
            "ERR syntax error, IDMP/IDMPAUTO specified multiple times",
        ),
        (
            ("IDMP", "", "iid1", "*", "f", "v"),
            "ERR syntax error, IDMP requires a non-empty producer ID",
        ),
        (
            ("IDMP", "p1", "", "*", "f", "v"),
            "ERR syntax error, IDMP requires a non-empty idempotent ID",
        ),
        (
            ("IDMPAUTO", "", "*", "f", "v"),
            "ERR syntax error, IDMPAUTO requires a non-empty producer ID",
        ),
        (
            ("IDMPAUTO", "p1", "IDMPAUTO", "p2", "*", "f", "v"),
            "ERR syntax error, IDMP/IDMPAUTO specified multiple times",
        ),
        (
            ("IDMP", "p1", "iid1", "IDMPAUTO", "p2", "*", "f", "v"),
            "ERR syntax error, IDMP/IDMPAUTO specified multiple times",
        ),
        (
            ("IDMPAUTO", "p1", "1-1", "f", "v"),
            "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs",
        ),
        (("IDMP", "p1", "i1", "*", "f"), "ERR wrong number of arguments for 'xadd' command"),
        (("IDMP", "p1", "i1"), "ERR wrong number of arguments for 'xadd' command"),
        (
            ("IDMPAUTO", "p1", "*", "f", "v", "g"),
            "ERR wrong number of arguments for 'xadd' command",
        ),
    ],
)
def test_xadd_idmp_invalid_syntax(s, args, message):
    assert error_of(s, "XADD", "s", *args) == message
    assert x(s, "EXISTS", "s") == 0


def test_xadd_idmp_syntax_checked_before_key_type(s):
    x(s, "SET", "str", "v")
    assert error_of(s, "XADD", "str", "IDMP", "", "i", "*", "f", "v") == (
        "ERR syntax error, IDMP requires a non-empty producer ID"
    )
    assert error_of(s, "XADD", "str", "IDMP", "p", "i", "*", "f", "v") == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )


# --- IDMP basics ---------------------------------------------------------------------


def test_xadd_idmp_basic_addition(s):
    iids = [
        "1",
        "A",
        "B",
        "-",
        "+",
        "*",
        "^",
        "$",
        "#",
        "@",
        "?",
        "\\",
        "IDMP",
        "123-456",
        "9999999999999-9999999999999",
        "hello世界",
        "héllo",
        "line1\nline2",
        "tab\there",
        'quote"test',
        "with spaces",
        "long" * 100,
        "x" * 1000,
        "special!@#$%^&*()",
        "path/to/file",
        "key:value",
    ]
    for seq, iid in enumerate(iids):
        assert idmp(s, "p1", iid, "f", "v") == nid(seq)
    assert xlen(s) == 26
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 26,
        "iids-added": 26,
        "iids-duplicates": 0,
    }


def test_xadd_idmp_duplicate_request_returns_same_id(s):
    id1 = idmp(s, "p1", "payment-abc", "amount", "100", "currency", "USD")
    assert id1 == nid(0)
    assert idmp(s, "p1", "payment-abc", "amount", "200", "currency", "EUR") == id1
    assert xlen(s) == 1
    assert x(s, "XRANGE", "s", "-", "+") == [[id1, [b"amount", b"100", b"currency", b"USD"]]]


def test_xadd_idmp_multiple_different_iids_create_multiple_entries(s):
    ids = [
        idmp(s, "p1", f"req-{i}", "user", user)
        for i, user in enumerate(["alice", "bob", "charlie"], 1)
    ]
    assert ids == [nid(0), nid(1), nid(2)]
    assert x(s, "XRANGE", "s", "-", "+") == [
        [nid(0), [b"user", b"alice"]],
        [nid(1), [b"user", b"bob"]],
        [nid(2), [b"user", b"charlie"]],
    ]


def test_xadd_idmp_with_binary_safe_iid(s):
    iid = b"\x00\x01\x02\xff"
    id1 = idmp(s, "p1", iid, "field", "value")
    assert idmp(s, "p1", iid, "field", "dup") == id1
    # one byte off is another iid
    assert idmp(s, "p1", b"\x00\x01\x02", "field", "other") == nid(1)
    assert idmp(s, "p1", b"\x00\x01\x02\xff\x00", "field", "other") == nid(2)


def test_xadd_idmp_with_maximum_length_iid(s):
    iid = "x" * 65536
    assert idmp(s, "p1", iid, "field", "value") == nid(0)
    assert idmp(s, "p1", iid, "field", "dup") == nid(0)


def test_xadd_idmp_with_maxlen_option(s):
    id1 = idmp(s, "p1", "req-1", "field", "value1", opts=("MAXLEN", "~", 100))
    id2 = idmp(s, "p1", "req-2", "field", "value2", opts=("MAXLEN", "~", 100))
    assert idmp(s, "p1", "req-1", "field", "value3", opts=("MAXLEN", "~", 100)) == id1
    assert (id1, id2, xlen(s)) == (nid(0), nid(1), 2)


def test_xadd_idmp_with_minid_option(s):
    id1 = idmp(s, "p1", "req-1", "field", "value1", opts=("MINID", "~", "1000000000-0"))
    assert idmp(s, "p1", "req-1", "field", "value2", opts=("MINID", "~", "1000000000-0")) == id1
    assert xlen(s) == 1


def test_xadd_idmp_duplicate_does_not_trim(s):
    id1 = idmp(s, "p1", "req-1", "f", "v1")
    idmp(s, "p1", "req-2", "f", "v2")
    assert idmp(s, "p1", "req-1", "f", "v3", opts=("MAXLEN", 0)) == id1
    assert xlen(s) == 2
    assert idmp(s, "p1", "req-2", "f", "v3", opts=("MINID", "=", MAX_ID)) == nid(1)
    assert xlen(s) == 2
    assert counters(s)["iids-duplicates"] == 2


def test_xadd_idmp_new_entry_is_trimmed_like_any_other(s):
    idmp(s, "p1", "req-1", "f", "v1")
    assert idmp(s, "p1", "req-2", "f", "v2", opts=("MAXLEN", 1)) == nid(1)
    assert x(s, "XRANGE", "s", "-", "+") == [[nid(1), [b"f", b"v2"]]]
    # The trimmed entry's IID is still tracked.
    assert idmp(s, "p1", "req-1", "f", "again") == nid(0)


def test_xadd_idmp_with_nomkstream_option(s):
    assert idmp(s, "p1", "req-1", "field", "value", opts=("NOMKSTREAM",)) is None
    assert x(s, "EXISTS", "s") == 0
    assert idmp(s, "p1", "req-2", "field", "value") == nid(0)
    assert idmp(s, "p1", "req-3", "field", "value", opts=("NOMKSTREAM",)) == nid(1)
    assert xlen(s) == 2
    # the NOMKSTREAM call on the missing key did not record req-1
    assert idmp(s, "p1", "req-1", "field", "value") == nid(2)


def test_xadd_idmp_with_keepref_option(s):
    id1 = idmp(s, "p1", "req-1", "field", "value1", opts=("KEEPREF",))
    assert idmp(s, "p1", "req-1", "field", "value2", opts=("KEEPREF",)) == id1
    assert xlen(s) == 1


def test_xadd_idmp_with_combined_options(s):
    id1 = x(
        s,
        "XADD",
        "s",
        "IDMP",
        "p1",
        "req-1",
        "KEEPREF",
        "MAXLEN",
        "~",
        1000,
        "LIMIT",
        10,
        "*",
        "field1",
        "value1",
        "field2",
        "value2",
    )
    id2 = x(
        s,
        "XADD",
        "s",
        "IDMP",
        "p1",
        "req-1",
        "KEEPREF",
        "MAXLEN",
        "~",
        1000,
        "LIMIT",
        10,
        "*",
        "field3",
        "value3",
    )
    assert id1 == id2 == nid(0)
    assert x(s, "XRANGE", "s", "-", "+") == [
        [nid(0), [b"field1", b"value1", b"field2", b"value2"]],
    ]


def test_xadd_idmp_argument_order_variations(s):
    assert x(s, "XADD", "s", "IDMP", "p1", "req-1", "MAXLEN", "~", 100, "*", "f", "v1") == nid(0)
    assert x(s, "XADD", "s", "MAXLEN", "~", 100, "IDMP", "p1", "req-2", "*", "f", "v2") == nid(1)
    assert x(
        s, "XADD", "s", "NOMKSTREAM", "IDMP", "p1", "req-3", "MAXLEN", "~", 100, "*", "f", "v3"
    ) == nid(2)
    assert x(s, "XADD", "s", "idmp", "p1", "req-4", "*", "f", "v4") == nid(3)
    assert xlen(s) == 4


def test_xadd_idmp_concurrent_duplicate_requests(s):
    results = []
    lock = threading.Lock()

    def worker(n):
        r = idmp(s, "p1", "concurrent-req", "client", str(n))
        with lock:
            results.append(r)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [nid(0)] * 8
    assert xlen(s) == 1
    assert counters(s)["iids-duplicates"] == 7


def test_xadd_idmp_in_an_atomic_batch(s):
    results = s.execute_many(
        [
            ["XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1"],
            ["XADD", "s", "IDMP", "p1", "req-2", "*", "field", "value2"],
            ["XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value3"],
            ["XADD", "s", "IDMP", "p1", "req-3", "*", "field", "value4"],
        ]
    )
    assert results == [nid(0), nid(1), nid(0), nid(2)]
    assert xlen(s) == 3


def test_xadd_idmp_with_consumer_groups(s):
    id1 = idmp(s, "p1", "cg-1", "field", "value1")
    id2 = idmp(s, "p1", "cg-2", "field", "value2")
    x(s, "XGROUP", "CREATE", "s", "mygroup", "0")
    reply = x(s, "XREADGROUP", "GROUP", "mygroup", "c1", "COUNT", 10, "STREAMS", "s", ">")
    assert reply == [[b"s", [[id1, [b"field", b"value1"]], [id2, [b"field", b"value2"]]]]]
    assert x(s, "XACK", "s", "mygroup", id1, id2) == 2
    assert idmp(s, "p1", "cg-1", "field", "dup") == id1
    # A duplicate adds nothing for the group to read.
    assert x(s, "XREADGROUP", "GROUP", "mygroup", "c1", "STREAMS", "s", ">") is None


def test_xadd_idmp_duplicate_of_a_deleted_entry_returns_its_id(s):
    id1 = idmp(s, "p1", "req-1", "f", "v")
    x(s, "XADD", "s", "*", "other", "entry")
    assert x(s, "XDEL", "s", id1) == 1
    assert idmp(s, "p1", "req-1", "f", "v") == id1
    assert xlen(s) == 1


def test_xadd_idmp_duplicate_when_stream_ids_are_exhausted(s):
    id1 = idmp(s, "p1", "req-1", "f", "v")
    auto_id = auto(s, "p2", "a", "b")
    x(s, "XADD", "s", MAX_ID, "last", "entry")
    assert idmp(s, "p1", "req-1", "f", "other") == id1
    assert auto(s, "p2", "a", "b") == auto_id
    assert error_of(s, "XADD", "s", "IDMP", "p1", "req-2", "*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items"
    )
    assert error_of(s, "XADD", "s", "*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items"
    )
    info = counters(s)
    assert (info["iids-tracked"], info["iids-added"], info["iids-duplicates"]) == (2, 2, 2)


def test_xadd_idmp_failed_add_leaves_no_producer(s):
    # redis-server 8.8 keeps the producer xaddCommand created before the append failed,
    # on a key its expiry never visits (upstream issue #15840): a deliberate difference,
    # docs/differences.md "idmp-failed-producer".
    x(s, "XADD", "s", MAX_ID, "f", "v")
    assert error_of(s, "XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items"
    )
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 0,
        "iids-duplicates": 0,
    }
    # A producer that already held IIDs stays.
    s2 = "s2"
    first = x(s, "XADD", s2, "IDMP", "p1", "req-1", "*", "f", "v")
    x(s, "XADD", s2, MAX_ID, "f", "v")
    assert error_of(s, "XADD", s2, "IDMP", "p1", "req-2", "*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items"
    )
    assert error_of(s, "XADD", s2, "IDMPAUTO", "p9", "*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items"
    )
    assert counters(s, s2) == {
        "pids-tracked": 1,
        "iids-tracked": 1,
        "iids-added": 1,
        "iids-duplicates": 0,
    }
    assert x(s, "XADD", s2, "IDMP", "p1", "req-1", "*", "f", "v") == first


def test_xadd_idmp_id_in_the_future_of_the_clock(s):
    x(s, "XADD", "s", f"{NOW + 5000}-7", "f", "v")
    assert idmp(s, "p1", "req-1", "f", "v") == nid(8, NOW + 5000)
    assert idmp(s, "p1", "req-1", "f", "v") == nid(8, NOW + 5000)


# --- producers -----------------------------------------------------------------------


def test_xadd_idmp_multiple_producers_have_isolated_namespaces(s):
    id1 = idmp(s, "producer1", "req-123", "field", "from-p1")
    id2 = idmp(s, "producer2", "req-123", "field", "from-p2")
    assert (id1, id2) == (nid(0), nid(1))
    assert idmp(s, "producer1", "req-123", "field", "dup-p1") == id1
    assert idmp(s, "producer2", "req-123", "field", "dup-p2") == id2
    assert x(s, "XRANGE", "s", "-", "+") == [
        [id1, [b"field", b"from-p1"]],
        [id2, [b"field", b"from-p2"]],
    ]


def test_xadd_idmp_multiple_producers_each_have_their_own_maxsize(s):
    idmp(s, "p1", "init", "field", "init")
    assert x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 3, "IDMP-DURATION", 60) == b"OK"
    p1 = [idmp(s, "p1", f"req-{i}", "field", f"p1-v{i}") for i in (1, 2, 3)]
    p2 = [idmp(s, "p2", f"req-{i}", "field", f"p2-v{i}") for i in (1, 2, 3)]
    assert p1 + p2 == [nid(i) for i in range(1, 7)]
    for i in range(3):
        assert idmp(s, "p1", f"req-{i + 1}", "field", "dup") == p1[i]
        assert idmp(s, "p2", f"req-{i + 1}", "field", "dup") == p2[i]
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 6,
        "iids-added": 7,
        "iids-duplicates": 6,
    }
    # p1's "init" was cleared by XCFGSET; a 4th p2 IID evicts only p2's oldest.
    idmp(s, "p2", "req-4", "field", "p2-v4")
    assert idmp(s, "p2", "req-1", "field", "again") == nid(8)
    assert idmp(s, "p1", "req-1", "field", "dup") == p1[0]


def test_xadd_idmp_multiple_producers_with_binary_producer_ids(s):
    id1 = idmp(s, b"\x00\x01\x02", "req-1", "field", "v1")
    id2 = idmp(s, b"\x03\x04\x05", "req-1", "field", "v2")
    assert (id1, id2, xlen(s)) == (nid(0), nid(1), 2)
    assert idmp(s, b"\x00\x01\x02", "req-1", "field", "dup") == id1
    assert idmp(s, b"\x00\x01", "req-1", "field", "new") == nid(2)


def test_xadd_idmp_multiple_producers_with_unicode_and_long_ids(s):
    for seq, pid in enumerate(
        ["producer-世界", "producer-héllo", "producer-日本", "a" * 1000, "b" * 1000]
    ):
        assert idmp(s, pid, "req-1", "field", "v") == nid(seq)
    assert idmp(s, "a" * 1000, "req-1", "field", "dup") == nid(3)
    assert counters(s)["pids-tracked"] == 5
    assert xlen(s) == 5


def test_xadd_idmp_multiple_producers_concurrent_access(s):
    results = {}

    def worker(service):
        results[service] = idmp(s, service, "order-123", "data", "from-" + service)

    threads = [threading.Thread(target=worker, args=(f"service-{c}",)) for c in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [nid(0), nid(1), nid(2)]
    assert idmp(s, "service-a", "order-123", "data", "retry") == results["service-a"]
    assert counters(s)["pids-tracked"] == 3


def test_xadd_idmp_multiple_producers_in_an_atomic_batch(s):
    results = s.execute_many(
        [
            ["XADD", "s", "IDMP", "p1", "req-1", "*", "field", "v1"],
            ["XADD", "s", "IDMP", "p2", "req-1", "*", "field", "v2"],
            ["XADD", "s", "IDMP", "p1", "req-1", "*", "field", "dup"],
            ["XADD", "s", "IDMP", "p2", "req-2", "*", "field", "v3"],
            ["XADD", "s", "IDMP", "p3", "req-1", "*", "field", "v4"],
        ]
    )
    assert results == [nid(0), nid(1), nid(0), nid(2), nid(3)]
    assert xlen(s) == 4
    assert counters(s)["pids-tracked"] == 3


def test_xadd_idmp_multiple_producers_with_mixed_idmp_and_idmpauto(s):
    assert idmp(s, "p1", "explicit-iid", "field", "v1") == nid(0)
    assert auto(s, "p2", "field", "v1") == nid(1)
    assert idmp(s, "p3", "another-iid", "field", "v1") == nid(2)
    assert auto(s, "p4", "field", "v1") == nid(3)
    assert idmp(s, "p1", "explicit-iid", "field", "dup") == nid(0)
    assert auto(s, "p2", "field", "v1") == nid(1)
    # The auto IID is just an IID: IDMP with the same bytes finds it.
    assert idmp(s, "p2", xstreams.auto_iid([b"field", b"v1"]), "x", "y") == nid(1)
    assert counters(s)["pids-tracked"] == 4


def test_xadd_idmp_multiple_producers_stress(s):
    ids = [idmp(s, f"producer-{i}", "request-1", "field", f"value-{i}") for i in range(50)]
    assert ids == [nid(i) for i in range(50)]
    assert counters(s) == {
        "pids-tracked": 50,
        "iids-tracked": 50,
        "iids-added": 50,
        "iids-duplicates": 0,
    }
    for i in range(50):
        assert idmp(s, f"producer-{i}", "request-1", "field", "dup") == ids[i]
    assert xlen(s) == 50


# --- tracking and the keyspace -------------------------------------------------------


def test_xadd_idmp_tracking_removed_after_del(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 2)
    idmp(s, "p1", "req-1", "field", "v1")
    assert counters(s)["pids-tracked"] == 1
    assert x(s, "DEL", "s") == 1
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 2)
    assert idmp(s, "p1", "req-1", "field", "v2") == nid(1)  # a new stream starts again
    assert xlen(s) == 2
    s.advance_clock_ms(2000)
    s.sweep()
    assert counters(s)["pids-tracked"] == 0
    assert counters(s)["iids-tracked"] == 0


def test_xadd_idmp_tracking_cleared_after_flushdb(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 2)
    idmp(s, "p1", "req-1", "field", "v1")
    x(s, "FLUSHDB")
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 2)
    id2 = idmp(s, "p1", "req-1", "field", "v2")
    assert xlen(s) == 2
    s.advance_clock_ms(2000)
    s.sweep()
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 2,
        "iids-duplicates": 0,
    }
    assert idmp(s, "p1", "req-1", "field", "v3") != id2
