"""Idempotent XADD (Redis 8.6): IDMP, IDMPAUTO, XIDMPRECORD, XCFGSET and the IDMP fields
of XINFO STREAM -- ports of Redis's own tests, made exact, plus the points of our issue.

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
from support_streams import (
    MAX_ID,
    NOW,
    error_of,
    new_store,
    xinfo_full,
    xinfo_stream,
)


@pytest.fixture
def s():
    store = new_store()
    yield store
    store.validate()


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


def test_xadd_idmp_failed_add_still_registers_the_producer(s):
    # xaddCommand gets-or-creates the producer before the append can fail.
    x(s, "XADD", "s", MAX_ID, "f", "v")
    assert error_of(s, "XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items"
    )
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 0,
        "iids-added": 0,
        "iids-duplicates": 0,
    }


def test_xadd_idmp_id_in_the_future_of_the_clock(s):
    x(s, "XADD", "s", f"{NOW + 5000}-7", "f", "v")
    assert idmp(s, "p1", "req-1", "f", "v") == nid(8, NOW + 5000)
    assert idmp(s, "p1", "req-1", "f", "v") == nid(8, NOW + 5000)


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


# --- expiry --------------------------------------------------------------------------


def test_xidmp_entries_expire_after_duration(s):
    idmp(s, "p1", "req-1", "field", "value1")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 1)  # changes the value: clears the map
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    assert id1 == nid(1)
    assert idmp(s, "p1", "req-1", "field", "value2") == id1
    s.advance_clock_ms(2500)
    assert idmp(s, "p1", "req-1", "field", "value3") == nid(0, NOW + 2500)


def test_xidmp_expiry_boundary_is_exact(s):
    x(s, "XADD", "s", "*", "init", "x")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 10)
    id1 = idmp(s, "p1", "req-1", "f", "v")
    s.advance_clock_ms(9999)
    s.sweep()
    assert counters(s)["iids-tracked"] == 1
    assert idmp(s, "p1", "req-1", "f", "v") == id1
    s.advance_clock_ms(1)  # id1's ms is now exactly 10 s old
    s.sweep()
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 1,
        "iids-duplicates": 1,
    }
    assert idmp(s, "p1", "req-1", "f", "v") == nid(0, NOW + 10000)


def test_xidmp_expiry_follows_the_stream_id_not_the_insertion_time(s):
    # "*" with a last id in the future makes ids in the future: their IIDs live longer.
    x(s, "XADD", "s", f"{NOW + 60000}-0", "f", "future")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 1)
    id1 = idmp(s, "p1", "req-1", "f", "v")
    assert id1 == nid(1, NOW + 60000)
    s.advance_clock_ms(60999)
    s.sweep()
    assert idmp(s, "p1", "req-1", "f", "v") == id1
    s.advance_clock_ms(1)
    s.sweep()
    assert counters(s)["iids-tracked"] == 0


def test_xidmp_expiry_is_per_entry_and_removes_empty_producers(s):
    x(s, "XADD", "s", "*", "init", "x")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 5)
    idmp(s, "p1", "a", "f", "v")  # NOW
    s.advance_clock_ms(2000)
    idmp(s, "p1", "b", "f", "v")  # NOW+2000
    idmp(s, "p2", "a", "f", "v")  # NOW+2000
    s.advance_clock_ms(3000)  # NOW+5000: p1/a expires
    s.sweep()
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 2,
        "iids-added": 3,
        "iids-duplicates": 0,
    }
    s.advance_clock_ms(2000)
    s.sweep()
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 3,
        "iids-duplicates": 0,
    }


def test_expired_iids_stay_until_the_cron_sweep(s):
    """The issue's example: redis-server expires IIDs only in its once-a-second cron
    (handleExpiredIdmpEntries); XADD's lookup and XINFO leave an expired IID alone."""
    x(s, "XADD", "s", "1", "f", "x")
    x(s, "XIDMPRECORD", "s", "p", "i", "1-0")  # ms 1: long expired
    assert x(s, "XADD", "s", "IDMP", "p", "i", "*", "f", "v") == b"1-0"
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 1,
        "iids-added": 1,
        "iids-duplicates": 1,
    }
    # The sweep runs on the store clock once a second, phased by the store's first
    # command (as a server's cron by its start): 999 ms later nothing has run yet ...
    s.advance_clock_ms(999)
    assert x(s, "XADD", "s", "IDMP", "p", "i", "*", "f", "v") == b"1-0"
    assert counters(s)["iids-tracked"] == 1
    # ... and at 1000 ms the sweep runs before the next command.
    s.advance_clock_ms(1)
    assert counters(s)["pids-tracked"] == 0
    assert x(s, "XADD", "s", "IDMP", "p", "i", "*", "f", "v") == nid(0, NOW + 1000)


def test_the_cron_sweeps_with_the_time_of_its_last_tick(s):
    """A store idle for a while sweeps as the cron would have at its last tick, not with
    the time of the command that finds it due."""
    x(s, "XADD", "s", "*", "init", "x")  # NOW: the first tick
    x(s, "XCFGSET", "s", "IDMP-DURATION", 10)
    idmp(s, "p1", "a", "f", "v")  # id ms NOW: expires at a sweep at NOW + 10000
    s.advance_clock_ms(10500)  # ticks at NOW+1000 .. NOW+10000: the last one expires it
    assert counters(s)["iids-tracked"] == 0
    idmp(s, "p1", "b", "f", "v")  # id ms NOW + 10500
    s.advance_clock_ms(10400)  # NOW+20900: last tick NOW+20000 < NOW+20500
    assert counters(s)["iids-tracked"] == 1
    s.advance_clock_ms(100)  # NOW+21000: a tick, and NOW+10500 <= NOW+21000-10000
    assert counters(s)["iids-tracked"] == 0


def test_xidmp_set_evicts_entries_when_maxsize_is_reached(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 3, "IDMP-DURATION", 60)
    ids = [idmp(s, "p1", f"req-{i}", "field", f"v{i}") for i in (1, 2, 3)]
    for i in range(3):
        assert idmp(s, "p1", f"req-{i + 1}", "field", "dup") == ids[i]
    idmp(s, "p1", "req-4", "field", "v4")
    assert idmp(s, "p1", "req-1", "field", "new") == nid(5)
    # req-2 was evicted by that; req-3 is still tracked.
    assert idmp(s, "p1", "req-3", "field", "dup2") == ids[2]
    assert idmp(s, "p1", "req-2", "field", "new") == nid(6)
    assert xlen(s) == 7


# --- XCFGSET -------------------------------------------------------------------------


def test_xcfgset_set_values_and_xinfo(s):
    idmp(s, "p1", "req-1", "field", "value")
    assert (xinfo_stream(s, "s")["idmp-duration"], xinfo_stream(s, "s")["idmp-maxsize"]) == (
        100,
        100,
    )
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 5) == b"OK"
    assert xinfo_stream(s, "s")["idmp-duration"] == 5
    assert x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 5000) == b"OK"
    assert xinfo_stream(s, "s")["idmp-maxsize"] == 5000
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 3, "IDMP-MAXSIZE", 10000) == b"OK"
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (3, 10000)
    assert x(s, "XCFGSET", "s", "idmp-maxsize", 7, "idmp-duration", 9) == b"OK"
    full = xinfo_full(s, "s")
    assert (full["idmp-duration"], full["idmp-maxsize"]) == (9, 7)


def test_xcfgset_error_on_non_existent_or_wrong_type_key(s):
    assert error_of(s, "XCFGSET", "s", "IDMP-DURATION", 5) == "ERR no such key"
    assert error_of(s, "XCFGSET", "s", "BADARG") == "ERR no such key"
    x(s, "SET", "str", "v")
    assert error_of(s, "XCFGSET", "str", "IDMP-DURATION", 5) == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )
    assert error_of(s, "XCFGSET") == "ERR wrong number of arguments for 'xcfgset' command"


def test_xcfgset_duration_and_maxsize_bounds(s):
    idmp(s, "p1", "req-1", "field", "value")
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 86400) == b"OK"
    for bad in (86401, 0, -100):
        assert error_of(s, "XCFGSET", "s", "IDMP-DURATION", bad) == (
            "ERR IDMP-DURATION must be between 1 and 86400 seconds"
        )
    assert xinfo_stream(s, "s")["idmp-duration"] == 86400
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 1) == b"OK"
    assert x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 10000) == b"OK"
    for bad in (10001, 0, -50):
        assert error_of(s, "XCFGSET", "s", "IDMP-MAXSIZE", bad) == (
            "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
        )
    assert x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 1) == b"OK"
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (1, 1)


def test_xcfgset_error_leaves_earlier_values_unapplied(s):
    idmp(s, "p1", "req-1", "field", "value")
    assert error_of(s, "XCFGSET", "s", "IDMP-DURATION", 5, "IDMP-MAXSIZE", 0) == (
        "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
    )
    assert xinfo_stream(s, "s")["idmp-duration"] == 100
    assert idmp(s, "p1", "req-1", "field", "dup") == nid(0)


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "ERR At least one parameter must be specified"),
        (("IDMP-DURATION",), "ERR syntax error"),
        (("IDMP-MAXSIZE",), "ERR syntax error"),
        (("INVALID",), "ERR syntax error"),
        (("IDMP-DURATION", 5, "INVALID"), "ERR syntax error"),
        (("IDMP-DURATION", 5, "IDMP-DURATION", 6), "ERR IDMP-DURATION specified multiple times"),
        (("IDMP-MAXSIZE", 5, "IDMP-MAXSIZE", 6), "ERR IDMP-MAXSIZE specified multiple times"),
        (
            ("IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"),
            "ERR value is not an integer or out of range",
        ),
        (
            ("IDMP-MAXSIZE", "INVALID", "IDMP-DURATION"),
            "ERR value is not an integer or out of range",
        ),
    ]
    + [
        ((opt, v), "ERR value is not an integer or out of range")
        for opt in ("IDMP-DURATION", "IDMP-MAXSIZE")
        for v in ("A", "AAA", "*", "-", "+", "120-5", "3.14", "000000000", opt, "")
    ]
    + [
        (
            ("IDMP-DURATION", "IDMP-DURATION", "IDMP-DURATION"),
            "ERR value is not an integer or out of range",
        ),
        (
            ("IDMP-MAXSIZE", "IDMP-MAXSIZE", "IDMP-MAXSIZE"),
            "ERR value is not an integer or out of range",
        ),
    ],
)
def test_xcfgset_invalid_syntax(s, args, message):
    idmp(s, "p1", "req-1", "field", "value")
    assert error_of(s, "XCFGSET", "s", *args) == message


def test_xcfgset_multiple_configuration_changes(s):
    idmp(s, "p1", "req-1", "field", "value")
    for d in (1, 2, 3):
        x(s, "XCFGSET", "s", "IDMP-DURATION", d)
    for m in (100, 200):
        x(s, "XCFGSET", "s", "IDMP-MAXSIZE", m)
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (3, 200)


@pytest.mark.parametrize("opt, value", [("IDMP-DURATION", 5), ("IDMP-MAXSIZE", 5000)])
def test_xcfgset_changing_a_value_clears_all_iid_history(s, opt, value):
    id1 = idmp(s, "p1", "req-1", "field", "value1", "data", "data1")
    id2 = idmp(s, "p1", "req-2", "field", "value2", "data", "data2")
    assert idmp(s, "p1", "req-2", "field", "dup") == id2
    assert x(s, "XCFGSET", "s", opt, value) == b"OK"
    assert x(s, "XRANGE", "s", "-", "+") == [
        [id1, [b"field", b"value1", b"data", b"data1"]],
        [id2, [b"field", b"value2", b"data", b"data2"]],
    ]
    new_id = idmp(s, "p1", "req-1", "field", "new1")
    assert new_id == nid(2)
    assert idmp(s, "p1", "req-1", "field", "dup1") == new_id
    assert idmp(s, "p1", "req-2", "field", "new2") == nid(3)
    assert xlen(s) == 4


@pytest.mark.parametrize(
    "args",
    [("IDMP-DURATION", 100), ("IDMP-MAXSIZE", 100), ("IDMP-DURATION", 100, "IDMP-MAXSIZE", 100)],
)
def test_xcfgset_setting_the_same_value_keeps_history(s, args):
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    id2 = idmp(s, "p2", "req-2", "field", "value2")
    for _ in range(3):
        assert x(s, "XCFGSET", "s", *args) == b"OK"
    assert idmp(s, "p1", "req-1", "field", "dup2") == id1
    assert idmp(s, "p2", "req-2", "field", "dup3") == id2
    assert xlen(s) == 2
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 2,
        "iids-added": 2,
        "iids-duplicates": 2,
    }


def test_xcfgset_repeated_same_value_calls_after_a_change(s):
    x(s, "XADD", "s", "*", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 10, "IDMP-MAXSIZE", 5000)
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    for _ in range(3):
        x(s, "XCFGSET", "s", "IDMP-DURATION", 10, "IDMP-MAXSIZE", 5000)
    assert idmp(s, "p1", "req-1", "field", "dup") == id1
    id2 = idmp(s, "p2", "req-2", "field", "value2")
    assert idmp(s, "p2", "req-2", "field", "dup2") == id2
    assert xlen(s) == 3


def test_xcfgset_one_changed_value_clears_even_if_the_other_is_unchanged(s):
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 100)
    x(s, "XCFGSET", "s", "IDMP-DURATION", 100)
    assert idmp(s, "p1", "req-1", "field", "dup") == id1
    x(s, "XCFGSET", "s", "IDMP-DURATION", 100, "IDMP-MAXSIZE", 99)
    assert idmp(s, "p1", "req-1", "field", "new") == nid(1)
    x(s, "XCFGSET", "s", "IDMP-DURATION", 50)
    assert idmp(s, "p1", "req-1", "field", "new") == nid(2)
    assert xlen(s) == 3


def test_xcfgset_clears_all_producer_histories_but_keeps_lifetime_counters(s):
    for pid in ("p1", "p2", "p3"):
        idmp(s, pid, "req-1", "field", "v")
    idmp(s, "p1", "req-1", "field", "dup")
    assert counters(s) == {
        "pids-tracked": 3,
        "iids-tracked": 3,
        "iids-added": 3,
        "iids-duplicates": 1,
    }
    x(s, "XCFGSET", "s", "IDMP-DURATION", 60)
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 3,
        "iids-duplicates": 1,
    }
    assert idmp(s, "p1", "req-1", "field", "new") == nid(3)
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 1,
        "iids-added": 4,
        "iids-duplicates": 1,
    }


def test_xcfgset_maxsize_wraparound_keeps_last_8_entries(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 8, "IDMP-DURATION", 60)
    ids = [idmp(s, "p1", f"req-{i}", "field", f"v{i}") for i in range(1, 101)]
    for i in range(93, 101):
        assert idmp(s, "p1", f"req-{i}", "field", "dup") == ids[i - 1]
    for i in range(1, 93):
        assert idmp(s, "p1", f"req-{i}", "field", "new") == nid(100 + i)
    assert xlen(s) == 193


def test_xcfgset_defaults_come_from_config_at_stream_creation():
    store = new_store(config={"stream-idmp-duration": 7, "stream-idmp-maxsize": 3})
    x(store, "XADD", "a", "*", "f", "v")
    info = xinfo_stream(store, "a")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (7, 3)
    store.config_set("stream-idmp-duration", 50)
    store.config_set("stream-idmp-maxsize", 60)
    info = xinfo_stream(store, "a")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (7, 3)
    x(store, "XGROUP", "CREATE", "b", "g", "$", "MKSTREAM")
    info = xinfo_stream(store, "b")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (50, 60)
    # Setting the stream's own values to the new defaults is a change for "a".
    idmp(store, "p", "i", "f", "v", key="a")
    x(store, "XCFGSET", "a", "IDMP-DURATION", 7)
    assert counters(store, "a")["iids-tracked"] == 1
    x(store, "XCFGSET", "a", "IDMP-DURATION", 50)
    assert counters(store, "a")["iids-tracked"] == 0
    store.validate()


def test_config_set_stream_idmp_validation(s):
    for name, low, high in (("stream-idmp-duration", 1, 86400), ("stream-idmp-maxsize", 1, 10000)):
        for bad in (high + 1, high * 5, 0, -1, -100):
            with pytest.raises(ValueError) as info:
                s.config_set(name, bad)
            assert f"argument must be between {low} and {high} inclusive" in str(info.value)
        s.config_set(name, high)
        assert s.config_get(name) == str(high)
        s.config_set(name, low)
        assert s.config_get(name) == str(low)
        s.config_set(name, 100)


def test_xidmp_alias_of_the_design_document(s):
    # Not a Redis 8.8 command: the IDMP design document (shared/seeds/004_*) spells the
    # configuration commands XIDMP CFGSET/CFGGET; xstreams accepts that spelling as an alias
    # of XCFGSET (issue #4), answering CFGGET with the two settings.
    x(s, "XADD", "s", "*", "f", "v")
    assert x(s, "XIDMP", "CFGGET", "s") == [b"duration", 100, b"maxsize", 100]
    assert x(s, "XIDMP", "CFGSET", "s", "DURATION", 30, "MAXSIZE", 7) == b"OK"
    assert x(s, "XIDMP", "CFGGET", "s", "MAXSIZE") == [b"maxsize", 7]
    info = x(s, "XINFO", "STREAM", "s", protocol=3)
    assert (info[b"idmp-duration"], info[b"idmp-maxsize"]) == (30, 7)
    assert error_of(s, "XIDMP", "CFGSET", "s", "DURATION", 0) == (
        "ERR DURATION must be between 1 and 86400 seconds"
    )
    assert error_of(s, "XIDMP", "CFGGET", "nokey") == "ERR no such key"


# --- XINFO STREAM counters -----------------------------------------------------------


def test_xinfo_stream_idmp_fields_order(s):
    x(s, "XADD", "s", "*", "field", "value")
    keys = [k.decode() for k in x(s, "XINFO", "STREAM", "s")[::2]]
    assert keys == [
        "length",
        "radix-tree-keys",
        "radix-tree-nodes",
        "last-generated-id",
        "max-deleted-entry-id",
        "entries-added",
        "recorded-first-entry-id",
        "idmp-duration",
        "idmp-maxsize",
        "pids-tracked",
        "iids-tracked",
        "iids-added",
        "iids-duplicates",
        "groups",
        "first-entry",
        "last-entry",
    ]
    full_keys = [k.decode() for k in x(s, "XINFO", "STREAM", "s", "FULL")[::2]]
    assert full_keys == keys[:13] + ["entries", "groups"]


def test_xinfo_stream_iids_tracked_and_added(s):
    x(s, "XADD", "s", "*", "field", "value")
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 0,
        "iids-duplicates": 0,
    }
    idmp(s, "p1", "req-1", "field", "value1")
    assert counters(s)["iids-tracked"] == 1
    idmp(s, "p1", "req-2", "field", "value2")
    idmp(s, "p1", "req-1", "field", "duplicate")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 2,
        "iids-added": 2,
        "iids-duplicates": 1,
    }
    full = xinfo_full(s, "s")
    assert (
        full["pids-tracked"],
        full["iids-tracked"],
        full["iids-added"],
        full["iids-duplicates"],
    ) == (1, 2, 2, 1)


def test_xinfo_stream_iids_added_is_lifetime_counter_after_eviction(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 3)
    for i in (1, 2, 3):
        idmp(s, "p1", f"req-{i}", "field", f"v{i}")
    assert counters(s)["iids-tracked"] == 3
    assert counters(s)["iids-added"] == 4
    idmp(s, "p1", "req-4", "field", "v4")
    idmp(s, "p1", "req-5", "field", "v5")
    assert (counters(s)["iids-tracked"], counters(s)["iids-added"]) == (3, 6)


def test_xinfo_stream_iids_duplicates_is_lifetime_counter(s):
    idmp(s, "p1", "req-1", "field", "v1")
    assert counters(s)["iids-duplicates"] == 0
    idmp(s, "p1", "req-1", "field", "v1-dup")
    idmp(s, "p1", "req-1", "field", "v1-dup2")
    assert (counters(s)["iids-duplicates"], counters(s)["iids-added"]) == (2, 1)
    idmp(s, "p1", "req-2", "field", "v2")
    idmp(s, "p1", "req-1", "field", "v1-dup3")
    auto(s, "p1", "a", "b")
    auto(s, "p1", "a", "b")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 3,
        "iids-added": 3,
        "iids-duplicates": 4,
    }


def test_xinfo_stream_iids_duplicates_persists_after_eviction(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 3)
    for req in ("req-1", "req-1", "req-2", "req-2"):
        idmp(s, "p1", req, "field", "v")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 2,
        "iids-added": 3,
        "iids-duplicates": 2,
    }
    idmp(s, "p1", "req-3", "field", "v3")
    idmp(s, "p1", "req-4", "field", "v4")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 3,
        "iids-added": 5,
        "iids-duplicates": 2,
    }
    idmp(s, "p1", "req-3", "field", "v3-dup")
    idmp(s, "p1", "req-4", "field", "v4-dup")
    assert counters(s)["iids-duplicates"] == 4
    assert idmp(s, "p1", "req-1", "field", "evicted") == nid(5)


def test_xinfo_stream_iids_duplicates_with_multiple_producers(s):
    idmp(s, "p1", "req-1", "field", "v1-p1")
    idmp(s, "p2", "req-1", "field", "v1-p2")
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 2,
        "iids-added": 2,
        "iids-duplicates": 0,
    }
    idmp(s, "p1", "req-1", "field", "v1-p1-dup")
    idmp(s, "p2", "req-1", "field", "v1-p2-dup")
    assert counters(s)["iids-duplicates"] == 2


def test_xinfo_stream_iids_counters_after_cfgset_clears_history(s):
    for i in (1, 2, 3):
        idmp(s, "p1", f"req-{i}", "field", f"v{i}")
    idmp(s, "p1", "req-1", "field", "v1-dup")
    idmp(s, "p1", "req-2", "field", "v2-dup")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 3,
        "iids-added": 3,
        "iids-duplicates": 2,
    }
    x(s, "XCFGSET", "s", "IDMP-DURATION", 60)
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 3,
        "iids-duplicates": 2,
    }
    idmp(s, "p1", "req-4", "field", "v4")
    assert (counters(s)["iids-tracked"], counters(s)["iids-added"]) == (1, 4)


def test_xinfo_stream_pids_tracked(s):
    x(s, "XADD", "s", "*", "field", "value")
    assert counters(s)["pids-tracked"] == 0
    idmp(s, "p1", "req-1", "field", "v1")
    assert counters(s)["pids-tracked"] == 1
    idmp(s, "p1", "req-2", "field", "v2")
    assert counters(s)["pids-tracked"] == 1
    idmp(s, "p2", "req-1", "field", "v3")
    idmp(s, "producer3", "req-1", "field", "v4")
    assert counters(s)["pids-tracked"] == 3
    assert xinfo_full(s, "s")["pids-tracked"] == 3


def test_xinfo_stream_iids_tracked_counts_across_producers(s):
    for pid, req in (("p1", 1), ("p1", 2), ("p2", 1), ("p2", 2), ("p2", 3)):
        idmp(s, pid, f"req-{req}", "field", "v")
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 5,
        "iids-added": 5,
        "iids-duplicates": 0,
    }
    idmp(s, "p1", "req-1", "field", "dup")
    idmp(s, "p2", "req-2", "field", "dup")
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 5,
        "iids-added": 5,
        "iids-duplicates": 2,
    }


def test_xinfo_stream_idmp_duration_and_maxsize_fields(s):
    idmp(s, "p1", "req-1", "field", "value1")
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (
        int(s.config_get("stream-idmp-duration")),
        int(s.config_get("stream-idmp-maxsize")),
    )
    x(s, "XCFGSET", "s", "IDMP-DURATION", 300, "IDMP-MAXSIZE", 50)
    info, full = xinfo_stream(s, "s"), xinfo_full(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (300, 50)
    assert (full["idmp-duration"], full["idmp-maxsize"]) == (300, 50)
    x(s, "XCFGSET", "s", "IDMP-DURATION", 600)
    assert (xinfo_stream(s, "s")["idmp-duration"], xinfo_stream(s, "s")["idmp-maxsize"]) == (
        600,
        50,
    )
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 100)
    assert (xinfo_stream(s, "s")["idmp-duration"], xinfo_stream(s, "s")["idmp-maxsize"]) == (
        600,
        100,
    )
    resp3 = x(s, "XINFO", "STREAM", "s", protocol=3)
    assert (resp3[b"idmp-duration"], resp3[b"iids-added"]) == (600, 1)
