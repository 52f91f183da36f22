"""XNACK (Redis 8.8): ports of Redis's own tests, made exact, plus the points of our issue.

Guards the behaviours checked by the "XNACK ..." tests of Redis's
tests/unit/type/stream-cgroups.tcl, with the semantics of src/t_stream.c
(xnackCommand, nackSetDeliveryCount, pelListInsertNacked/pelListUnlink,
xpendingCommand, xclaimCommand, xautoclaimCommand, xinfoReplyWithStreamInfo,
streamReplyWithRange) and the design notes of the XNACK pull request
(shared/seeds/000_* and 003_*):

* argument parsing and errors (NOGROUP/WRONGTYPE before the mode, options before or
  after IDS, RETRYCOUNT bounds, numids);
* SILENT/FAIL/FATAL delivery-count rules, applied per occurrence of a repeated id,
  RETRYCOUNT overriding them, FATAL = LLONG_MAX never overflowing on later deliveries;
* FORCE creating unowned entries only for ids present in the stream;
* the NACK zone: unowned entries with delivery time 0 at the head of the PEL in FIFO
  order, re-NACK moving an entry to the zone's end, XPENDING showing consumer "" and
  idle -1 and letting them through any IDLE filter, XINFO STREAM FULL showing delivery
  time 0 and nacked-count after pel-count;
* XCLAIM/XAUTOCLAIM/XREADGROUP CLAIM taking NACKed entries whatever min-idle-time,
  deleted NACKed entries being dropped from the PEL (and reported by XAUTOCLAIM);
* XACK, XGROUP DELCONSUMER/DESTROY, history reads, and deletes/trims with each
  reference policy touching NACKed entries.

Skipped Redis tests (persistence, replication, DUMP/RESTORE, COPY):
"XNACK RDB save and load preserves NACKed entries", "XNACK NACKed entries survive
DUMP and RESTORE", "XNACK COPY preserves NACKed entries", "XNACK entries survive AOF
rewrite", "XNACK AOF rewrite batch split -- 65 NACKed entries with owned tail",
"XNACK AOF rewrite batch split -- entire PEL is NACK zone", "XNACK AOF rewrite with
mixed delivery_counts batches correctly", "XNACK FORCE-created entries survive AOF
rewrite", "XNACK replication of modes and FORCE", "XNACK reclaim operations propagate
correctly to replica".
"""

from __future__ import annotations

import pytest
from support_streams import (
    LLONG_MAX,
    NOW,
    Blocked,
    add_entries,
    error_of,
    full_group,
    full_group_keys,
    ids_of,
    new_store,
    pending,
    pending_count,
    read_all,
    xinfo_consumers,
    xinfo_full,
    xinfo_groups,
)


def x(store, *args, **kw):
    return store.execute_command(*args, **kw)


def nack(store, mode, *ids, key="s", group="g", extra=()):
    return x(store, "XNACK", key, group, mode, "IDS", len(ids), *ids, *extra)


def setup_read(store, n=3, key="s", consumer="c1", count=0):
    add_entries(store, key, n)
    x(store, "XGROUP", "CREATE", key, "g", "0")
    read_all(store, key, "g", consumer, count)


def nacked_count(store, key="s", index=0):
    return full_group(store, key, index)["nacked-count"]


def claim_order(store, consumer="cx", key="s"):
    """Drain the PEL one entry at a time with XREADGROUP CLAIM 0 COUNT 1 (head first)."""
    order = []
    while True:
        reply = x(
            store, "XREADGROUP", "GROUP", "g", consumer, "COUNT", 1, "CLAIM", 0, "STREAMS", key, ">"
        )
        if reply is None:
            return order
        entry = reply[0][1][0]
        if entry[3] == 0 and entry[2] == 0:  # a new entry: the PEL was drained
            return order
        order.append(entry[0])
        x(store, "XACK", key, "g", entry[0])


# --- argument and error validation ---------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("key",),
        ("key", "group"),
        ("key", "group", "SILENT"),
        ("key", "group", "SILENT", "IDS"),
        ("key", "group", "SILENT", "IDS", 1),
        ("mystream", "g", "FAIL", "RETRYCOUNT"),
    ],
)
def test_xnack_wrong_number_of_arguments(s, args):
    assert error_of(s, "XNACK", *args) == "ERR wrong number of arguments for 'xnack' command"


def test_xnack_nogroup_and_wrongtype(s):
    assert error_of(s, "XNACK", "nosuchkey", "grp", "SILENT", "IDS", 1, "1-0") == (
        "NOGROUP No such key 'nosuchkey' or consumer group 'grp'"
    )
    x(s, "XADD", "mystream", "1-0", "f", "v")
    assert error_of(s, "XNACK", "mystream", "nogroup", "SILENT", "IDS", 1, "1-0") == (
        "NOGROUP No such key 'mystream' or consumer group 'nogroup'"
    )
    x(s, "SET", "mykey", "not a stream")
    assert error_of(s, "XNACK", "mykey", "grp", "FAIL", "IDS", 1, "1-0") == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )


def test_xnack_key_and_group_checked_before_the_mode(s):
    assert error_of(s, "XNACK", "k", "g", "BADMODE", "IDS", 1, "1-0") == (
        "NOGROUP No such key 'k' or consumer group 'g'"
    )
    assert error_of(s, "XNACK", "k", "g", "FAIL", "BADOPT", "IDS", "x", "bad-id") == (
        "NOGROUP No such key 'k' or consumer group 'g'"
    )
    x(s, "SET", "str", "v")
    assert error_of(s, "XNACK", "str", "g", "BADMODE", "IDS", 1, "1-0") == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )
    x(s, "XADD", "s", "1-0", "f", "v")
    assert error_of(s, "XNACK", "s", "nogroup", "BADMODE", "IDS", 1, "1-0") == (
        "NOGROUP No such key 's' or consumer group 'nogroup'"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (("FAIL", "BADOPT", "IDS", 1, "1-0"), "ERR Unrecognized XNACK option 'BADOPT'"),
        (("FAIL", "IDS", 1, "1-0", "BADOPT"), "ERR Unrecognized XNACK option 'BADOPT'"),
        (("SILENT", "BADOPT", "IDS", 1, "1-0", "FORCE"), "ERR Unrecognized XNACK option 'BADOPT'"),
        (("SILENT", "FORCE", "BADOPT", "IDS", 1, "1-0"), "ERR Unrecognized XNACK option 'BADOPT'"),
        (
            ("FAIL", "RETRYCOUNT", 5, "BADOPT", "IDS", 1, "1-0"),
            "ERR Unrecognized XNACK option 'BADOPT'",
        ),
        (
            ("FAIL", "IDS", 1, "1-0", "RETRYCOUNT", 5, "BADOPT"),
            "ERR Unrecognized XNACK option 'BADOPT'",
        ),
        (
            ("FAIL", "FORCE", "IDS", 1, "1-0", "BADOPT", "RETRYCOUNT", 5),
            "ERR Unrecognized XNACK option 'BADOPT'",
        ),
        (("BADMODE", "IDS", 1, "1-0"), "ERR mode must be SILENT, FAIL, or FATAL"),
        (("FAIL", "FATAL", "IDS", 1, "1-0"), "ERR Unrecognized XNACK option 'FATAL'"),
        (("SILENT", "FAIL", "IDS", 1, "1-0"), "ERR Unrecognized XNACK option 'FAIL'"),
        (("FATAL", "SILENT", "IDS", 1, "1-0"), "ERR Unrecognized XNACK option 'SILENT'"),
        (("FAIL", "SILENT", "FATAL", "IDS", 1, "1-0"), "ERR Unrecognized XNACK option 'SILENT'"),
        (("SILENT", "NOTIDS", 1, "1-0"), "ERR Unrecognized XNACK option 'NOTIDS'"),
        (("SILENT", "FORCE", "RETRYCOUNT", 5), "ERR syntax error, expected IDS keyword"),
        (("SILENT", "IDS", "abc", "1-0"), "ERR numids must be a positive integer"),
        (("SILENT", "IDS", 0, "1-0"), "ERR numids must be a positive integer"),
        (("SILENT", "IDS", -1, "1-0"), "ERR numids must be a positive integer"),
        (("SILENT", "IDS", 2147483648, "1-0"), "ERR numids must be a positive integer"),
        (("SILENT", "IDS", 2, "1-0"), "ERR number of IDs doesn't match numids"),
        (
            ("FAIL", "IDS", 1, "not-a-valid-id"),
            "ERR Invalid stream ID specified as stream command argument",
        ),
        (("FAIL", "IDS", 1, "-"), "ERR Invalid stream ID specified as stream command argument"),
        (("FAIL", "IDS", 1, "+"), "ERR Invalid stream ID specified as stream command argument"),
        (
            ("FAIL", "IDS", 1, "1-0", "RETRYCOUNT", "abc"),
            "ERR value is not an integer or out of range",
        ),
        (("FAIL", "IDS", 1, "1-0", "RETRYCOUNT", -1), "ERR Invalid RETRYCOUNT value, must be >= 0"),
        (
            ("FAIL", "IDS", 1, "1-0", "RETRYCOUNT", "99999999999999999999"),
            "ERR value is not an integer or out of range",
        ),
        (("FAIL", "IDS", 1, "1-0", "RETRYCOUNT"), "ERR Unrecognized XNACK option 'RETRYCOUNT'"),
        (("FAIL", "IDS", 1, "1-0", "2-0"), "ERR Unrecognized XNACK option '2-0'"),
        (("FAIL", "IDS", 1, "1-0", "IDS"), "ERR Unrecognized XNACK option 'IDS'"),
        # options are all parsed before any id is
        (("FAIL", "IDS", 1, "bad-id", "BADOPT"), "ERR Unrecognized XNACK option 'BADOPT'"),
        (
            ("FAIL", "IDS", 1, "bad-id", "RETRYCOUNT", -5),
            "ERR Invalid RETRYCOUNT value, must be >= 0",
        ),
    ],
)
def test_xnack_argument_errors(s, args, message):
    setup_read(s, 2)
    assert error_of(s, "XNACK", "s", "g", *args) == message
    # No error changed anything.
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 1], [b"2-0", b"c1", 0, 1]]


def test_xnack_keywords_are_case_insensitive(s):
    setup_read(s, 2)
    assert x(s, "XNACK", "s", "g", "fail", "ids", 1, "1-0", "retrycount", 4, "force") == 1
    assert x(s, "XNACK", "s", "g", "Silent", "Ids", 1, "2-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 4], [b"2-0", b"", -1, 0]]


def test_xnack_repeated_options(s):
    setup_read(s, 3)
    # A second IDS block replaces the first; the last RETRYCOUNT wins.
    assert (
        x(
            s,
            "XNACK",
            "s",
            "g",
            "FAIL",
            "IDS",
            1,
            "1-0",
            "RETRYCOUNT",
            5,
            "IDS",
            1,
            "2-0",
            "RETRYCOUNT",
            7,
            "FORCE",
            "FORCE",
        )
        == 1
    )
    assert pending(s, "s", "g") == [
        [b"1-0", b"c1", 0, 1],
        [b"2-0", b"", -1, 7],
        [b"3-0", b"c1", 0, 1],
    ]


def test_xnack_ids_in_short_form(s):
    setup_read(s, 2)
    assert x(s, "XNACK", "s", "g", "FAIL", "IDS", 2, "1", "2-0") == 2
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1], [b"2-0", b"", -1, 1]]


# --- modes ---------------------------------------------------------------------------


def test_xnack_silent_mode_delivery_count(s):
    setup_read(s, 1)
    assert pending(s, "s", "g")[0][3] == 1
    assert nack(s, "SILENT", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0]]
    # Clamped at 0.
    x(s, "XCLAIM", "s", "g", "c2", 0, "1-0", "RETRYCOUNT", 0)
    assert nack(s, "SILENT", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0]]
    for _ in range(3):
        x(s, "XCLAIM", "s", "g", "c1", 0, "1-0")
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 3]]
    assert nack(s, "SILENT", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 2]]


def test_xnack_silent_applies_per_occurrence_of_a_repeated_id(s):
    setup_read(s, 1)
    assert nack(s, "SILENT", "1-0", "1-0") == 2
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0]]
    for _ in range(4):
        x(s, "XCLAIM", "s", "g", "c1", 0, "1-0")
    assert nack(s, "SILENT", "1-0", "1-0", "1-0") == 3
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1]]
    assert nacked_count(s) == 1


def test_xnack_fail_mode_keeps_delivery_count(s):
    setup_read(s, 1)
    assert nack(s, "FAIL", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1]]


def test_xnack_fatal_mode_sets_delivery_count_to_max(s):
    setup_read(s, 1)
    assert nack(s, "FATAL", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, LLONG_MAX]]


def test_xnack_fatal_count_does_not_overflow_on_later_deliveries(s):
    setup_read(s, 3)
    assert nack(s, "FATAL", "1-0", "2-0", "3-0") == 3
    # XREADGROUP CLAIM shows the count before the delivery and does not increment it.
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "COUNT", 1, "CLAIM", 0, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], NOW, LLONG_MAX]]]]
    # XCLAIM, XAUTOCLAIM and a history read do not wrap it either.
    assert ids_of(x(s, "XCLAIM", "s", "g", "c2", 0, "2-0")) == [b"2-0"]
    x(s, "XAUTOCLAIM", "s", "g", "c2", 0, "3-0")
    x(s, "XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0")
    x(s, "XCLAIM", "s", "g", "c3", 0, "1-0", "2-0", "3-0")
    s.advance_clock_ms(10)
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "CLAIM", 5, "STREAMS", "s", ">")
    assert [(e[0], e[3]) for e in reply[0][1]] == [
        (b"1-0", LLONG_MAX),
        (b"2-0", LLONG_MAX),
        (b"3-0", LLONG_MAX),
    ]
    assert pending(s, "s", "g") == [
        [b"1-0", b"c2", 0, LLONG_MAX],
        [b"2-0", b"c2", 0, LLONG_MAX],
        [b"3-0", b"c2", 0, LLONG_MAX],
    ]


def test_xnack_retrycount_max_value_then_deliveries(s):
    setup_read(s, 1)
    assert nack(s, "FAIL", "1-0", extra=("RETRYCOUNT", LLONG_MAX)) == 1
    x(s, "XCLAIM", "s", "g", "c2", 0, "1-0")
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, LLONG_MAX]]
    assert nack(s, "SILENT", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, LLONG_MAX - 1]]
    x(s, "XCLAIM", "s", "g", "c2", 0, "1-0")
    x(s, "XCLAIM", "s", "g", "c2", 0, "1-0")
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, LLONG_MAX]]


def test_xnack_releases_entries_and_removes_them_from_consumer_pel(s):
    setup_read(s, 3, count=2)
    read_all(s, "s", "g", "c2", 1)
    assert nack(s, "FAIL", "3-0") == 1
    assert nack(s, "FAIL", "1-0") == 1
    assert pending(s, "s", "g") == [
        [b"1-0", b"", -1, 1],
        [b"2-0", b"c1", 0, 1],
        [b"3-0", b"", -1, 1],
    ]
    assert pending(s, "s", "g", "c1") == [[b"2-0", b"c1", 0, 1]]
    assert pending(s, "s", "g", "c2") == []
    assert xinfo_groups(s, "s")[0]["consumers"] == 2
    # The summary form counts NACKed entries, but attributes them to no consumer.
    assert x(s, "XPENDING", "s", "g") == [3, b"1-0", b"3-0", [[b"c1", b"1"]]]


def test_xnack_return_count_and_edge_cases(s):
    setup_read(s, 3)
    assert nack(s, "FAIL", "9-9") == 0
    assert nack(s, "SILENT", "1-0", "2-0", "3-0") == 3
    assert pending(s, "s", "g") == [
        [b"1-0", b"", -1, 0],
        [b"2-0", b"", -1, 0],
        [b"3-0", b"", -1, 0],
    ]
    x(s, "XCLAIM", "s", "g", "c1", 0, "1-0", "2-0", "3-0")
    assert nack(s, "FAIL", "1-0", "9-9", "2-0", "8-8", "3-0") == 3
    assert [e[1] for e in pending(s, "s", "g")] == [b"", b"", b""]
    x(s, "XCLAIM", "s", "g", "c1", 0, "1-0")
    assert nack(s, "FAIL", "1-0", "1-0") == 2
    assert pending(s, "s", "g")[0] == [b"1-0", b"", -1, 2]
    assert x(s, "XACK", "s", "g", "1-0", "2-0", "3-0") == 3
    assert pending_count(s, "s", "g") == 0
    assert nack(s, "FAIL", "1-0") == 0


def test_xnack_on_already_nacked_entry(s):
    setup_read(s, 1)
    assert nack(s, "FAIL", "1-0") == 1
    assert nack(s, "FAIL", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1]]
    assert nack(s, "SILENT", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0]]
    assert nack(s, "FATAL", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, LLONG_MAX]]
    assert nack(s, "FAIL", "1-0") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, LLONG_MAX]]
    assert nacked_count(s) == 1


def test_xnack_retrycount_overrides_delivery_count(s):
    setup_read(s, 1)
    assert nack(s, "FATAL", "1-0", extra=("RETRYCOUNT", 42)) == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 42]]
    x(s, "XCLAIM", "s", "g", "c1", 0, "1-0")
    assert nack(s, "SILENT", "1-0", extra=("RETRYCOUNT", 10)) == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 10]]
    x(s, "XCLAIM", "s", "g", "c1", 0, "1-0")
    assert nack(s, "FAIL", "1-0", extra=("RETRYCOUNT", 0)) == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0]]
    assert nack(s, "FAIL", "1-0", extra=("RETRYCOUNT", 99)) == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 99]]


def test_xnack_does_not_touch_consumer_times(s):
    setup_read(s, 2)
    s.advance_clock_ms(300)
    nack(s, "FAIL", "1-0")
    s.advance_clock_ms(5)
    consumer = xinfo_consumers(s, "s", "g")[0]
    assert consumer == {"name": b"c1", "pending": 1, "idle": 305, "inactive": 305}


# --- FORCE ---------------------------------------------------------------------------


def test_xnack_force_behavior(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    assert nack(s, "FAIL", "1-0", extra=("FORCE",)) == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0]]
    assert x(s, "XCLAIM", "s", "g", "c1", 0, "1-0") == [[b"1-0", [b"f", b"v1"]]]
    assert nack(s, "FAIL", "9-9", extra=("FORCE",)) == 0
    x(s, "XACK", "s", "g", "1-0")
    assert nack(s, "FATAL", "1-0", extra=("FORCE",)) == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, LLONG_MAX]]
    x(s, "XACK", "s", "g", "1-0")
    assert nack(s, "SILENT", "1-0", "2-0", extra=("FORCE",)) == 2
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0], [b"2-0", b"", -1, 0]]
    # On owned entries FORCE takes the normal path.
    x(s, "XACK", "s", "g", "1-0", "2-0")
    read_all(s, "s", "g", "c1")
    assert nack(s, "FAIL", "1-0", "2-0", "3-0", extra=("FORCE",)) == 3
    assert pending(s, "s", "g") == [
        [b"1-0", b"", -1, 1],
        [b"2-0", b"", -1, 1],
        [b"3-0", b"", -1, 1],
    ]
    assert pending(s, "s", "g", "c1") == []
    # On an already NACKed entry: no duplicate is created.
    assert nack(s, "FAIL", "1-0", extra=("FORCE",)) == 1
    assert pending(s, "s", "g")[0] == [b"1-0", b"", -1, 1]
    assert pending_count(s, "s", "g") == 3


def test_xnack_force_on_empty_stream(s):
    x(s, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert nack(s, "FAIL", "1-0", extra=("FORCE",)) == 0
    assert x(s, "XPENDING", "s", "g") == [0, None, None, None]


def test_xnack_force_only_for_ids_present_in_the_stream(s):
    add_entries(s, "s", 4)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    x(s, "XDEL", "s", "2-0")
    # deleted id, id between entries, id past the last one, and 0-0
    assert nack(s, "FAIL", "2-0", "3-1", "9-0", "0-0", "1-0", "4-0", extra=("FORCE",)) == 2
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0], [b"4-0", b"", -1, 0]]
    assert nacked_count(s) == 2
    group = xinfo_groups(s, "s")[0]
    assert (group["pending"], group["last-delivered-id"], group["consumers"]) == (2, b"0-0", 0)


def test_xnack_force_and_retrycount(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    assert nack(s, "FAIL", "1-0", extra=("RETRYCOUNT", 7, "FORCE")) == 1
    assert nack(s, "SILENT", "2-0", extra=("RETRYCOUNT", 5, "FORCE")) == 1
    assert nack(s, "FATAL", "3-0", extra=("RETRYCOUNT", 99, "FORCE")) == 1
    assert pending(s, "s", "g") == [
        [b"1-0", b"", -1, 7],
        [b"2-0", b"", -1, 5],
        [b"3-0", b"", -1, 99],
    ]


def test_xnack_options_before_and_after_ids(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    variants = [
        (("FAIL", "FORCE", "IDS", 1, "1-0"), 0),
        (("FAIL", "FORCE", "RETRYCOUNT", 42, "IDS", 1, "1-0"), 42),
        (("FAIL", "RETRYCOUNT", 5, "IDS", 1, "1-0", "FORCE"), 5),
        (("FAIL", "FORCE", "IDS", 1, "1-0", "RETRYCOUNT", 3), 3),
        (("FAIL", "IDS", 1, "1-0", "RETRYCOUNT", 20, "FORCE"), 20),
    ]
    for args, count in variants:
        assert x(s, "XNACK", "s", "g", *args) == 1
        assert pending(s, "s", "g") == [[b"1-0", b"", -1, count]]
        x(s, "XACK", "s", "g", "1-0")
    assert (
        x(s, "XNACK", "s", "g", "FAIL", "RETRYCOUNT", 10, "IDS", 3, "1-0", "2-0", "3-0", "FORCE")
        == 3
    )
    assert [e[3] for e in pending(s, "s", "g")] == [10, 10, 10]


def test_xnack_force_created_entry_links_group_reference(s):
    # A FORCE-created entry references the stream entry like a delivered one: ACKED
    # deletion refuses it until it is acknowledged.
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "g", "$")
    assert nack(s, "FAIL", "1-0", extra=("FORCE",)) == 1
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "1-0", "2-0") == [2, 1]
    assert x(s, "XACK", "s", "g", "1-0") == 1
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "1-0") == [1]
    assert x(s, "XLEN", "s") == 0


# --- NACK zone order -----------------------------------------------------------------


def test_xnack_ordering_nack_zone_fifo(s):
    setup_read(s, 4)
    nack(s, "FAIL", "3-0")
    nack(s, "FAIL", "1-0")
    assert pending(s, "s", "g") == [
        [b"1-0", b"", -1, 1],
        [b"2-0", b"c1", 0, 1],
        [b"3-0", b"", -1, 1],
        [b"4-0", b"c1", 0, 1],
    ]
    group = full_group(s, "s")
    assert group["pending"] == [
        [b"1-0", b"", 0, 1],
        [b"2-0", b"c1", NOW, 1],
        [b"3-0", b"", 0, 1],
        [b"4-0", b"c1", NOW, 1],
    ]
    assert claim_order(s) == [b"3-0", b"1-0", b"2-0", b"4-0"]


def test_xnack_many_ids_in_one_call(s):
    x(s, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    ids = [f"{i}-0" for i in range(1, 51)]
    for i in ids:
        x(s, "XADD", "s", i, "f", "v")
    read_all(s, "s", "g", "c1", 50)
    assert nack(s, "FAIL", *ids) == 50
    assert pending(s, "s", "g") == [[i.encode(), b"", -1, 1] for i in ids]
    assert nacked_count(s) == 50
    # In the order given to XNACK.
    assert nack(s, "FAIL", *reversed(ids)) == 50
    assert claim_order(s)[:3] == [b"50-0", b"49-0", b"48-0"]


def test_xnack_re_nack_moves_entry_to_end_of_nack_zone(s):
    setup_read(s, 3)
    nack(s, "FAIL", "1-0", "2-0", "3-0")
    assert nacked_count(s) == 3
    nack(s, "FAIL", "1-0")
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (3, 3)
    s.advance_clock_ms(10)
    for expected in (b"2-0", b"3-0", b"1-0"):
        reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "COUNT", 1, "CLAIM", 5, "STREAMS", "s", ">")
        assert reply == [[b"s", [[expected, [b"f", b"v" + expected[:1]], NOW + 10, 1]]]]


def test_xnack_zone_stays_ahead_of_owned_entries_with_past_delivery_times(s):
    # XCLAIM ... TIME in the past never puts an owned entry ahead of the NACK zone.
    setup_read(s, 3)
    nack(s, "FAIL", "2-0")
    x(s, "XCLAIM", "s", "g", "c1", 0, "3-0", "TIME", 1, "JUSTID")
    assert pending(s, "s", "g") == [
        [b"1-0", b"c1", 0, 1],
        [b"2-0", b"", -1, 1],
        [b"3-0", b"c1", NOW - 1, 1],
    ]
    assert claim_order(s) == [b"2-0", b"3-0", b"1-0"]


def test_xnack_nacked_entry_reclaimed_with_past_time_leaves_the_zone(s):
    setup_read(s, 3)
    nack(s, "FAIL", "1-0", "2-0")
    x(s, "XCLAIM", "s", "g", "c2", 0, "1-0", "IDLE", 500, "JUSTID")
    assert full_group(s, "s")["nacked-count"] == 1
    assert pending(s, "s", "g") == [
        [b"1-0", b"c2", 500, 1],
        [b"2-0", b"", -1, 1],
        [b"3-0", b"c1", 0, 1],
    ]
    assert claim_order(s) == [b"2-0", b"1-0", b"3-0"]


# --- claiming NACKed entries ---------------------------------------------------------


def test_xnack_nacked_entries_claimable_via_xclaim(s):
    setup_read(s, 2)
    nack(s, "FAIL", "1-0")
    assert x(s, "XCLAIM", "s", "g", "c2", 99999, "1-0") == [[b"1-0", [b"f", b"v1"]]]
    assert pending(s, "s", "g", "c2") == [[b"1-0", b"c2", 0, 2]]
    assert nacked_count(s) == 0


def test_xnack_nacked_entries_claimable_via_xclaim_min_idle_zero(s):
    setup_read(s, 1)
    nack(s, "FAIL", "1-0")
    assert x(s, "XCLAIM", "s", "g", "c2", 0, "1-0", "JUSTID") == [b"1-0"]
    assert pending(s, "s", "g", "c2") == [[b"1-0", b"c2", 0, 1]]


def test_xnack_nacked_entries_claimable_via_xautoclaim(s):
    setup_read(s, 2)
    nack(s, "FAIL", "1-0")
    assert x(s, "XAUTOCLAIM", "s", "g", "c2", 99999, "0-0") == [
        b"0-0",
        [[b"1-0", [b"f", b"v1"]]],
        [],
    ]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 2], [b"2-0", b"c1", 0, 1]]


def test_xnack_nacked_entries_claimable_via_xautoclaim_min_idle_zero(s):
    setup_read(s, 1)
    nack(s, "FAIL", "1-0")
    assert x(s, "XAUTOCLAIM", "s", "g", "c2", 0, "0-0") == [b"0-0", [[b"1-0", [b"f", b"v1"]]], []]
    assert pending(s, "s", "g", "c2") == [[b"1-0", b"c2", 0, 2]]


def test_xnack_nacked_entries_claimable_via_xreadgroup_claim(s):
    setup_read(s, 1)
    nack(s, "FAIL", "1-0")
    s.advance_clock_ms(10)
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "CLAIM", 5, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], NOW + 10, 1]]]]
    assert pending(s, "s", "g", "c2") == [[b"1-0", b"c2", 0, 2]]


def test_xnack_xclaim_and_xautoclaim_of_deleted_nacked_entries(s):
    setup_read(s, 3)
    nack(s, "FAIL", "1-0", "3-0")
    x(s, "XDEL", "s", "1-0")
    x(s, "XDEL", "s", "3-0")
    assert x(s, "XCLAIM", "s", "g", "c2", 0, "1-0") == []
    assert pending(s, "s", "g") == [[b"2-0", b"c1", 0, 1], [b"3-0", b"", -1, 1]]
    assert x(s, "XAUTOCLAIM", "s", "g", "c2", 0, "0-0") == [
        b"0-0",
        [[b"2-0", [b"f", b"v2"]]],
        [b"3-0"],
    ]
    assert pending(s, "s", "g") == [[b"2-0", b"c2", 0, 2]]
    assert nacked_count(s) == 0


def test_xnack_xautoclaim_reports_deleted_nacked_entry_whatever_min_idle(s):
    setup_read(s, 2)
    nack(s, "FAIL", "1-0")
    x(s, "XDEL", "s", "1-0")
    assert x(s, "XAUTOCLAIM", "s", "g", "c2", 99999, "0-0", "JUSTID") == [b"0-0", [], [b"1-0"]]
    assert pending(s, "s", "g") == [[b"2-0", b"c1", 0, 1]]


def test_xnack_xclaim_force_of_nacked_entry(s):
    setup_read(s, 1)
    nack(s, "FATAL", "1-0")
    assert x(s, "XCLAIM", "s", "g", "c2", 0, "1-0", "FORCE", "RETRYCOUNT", 3) == [
        [b"1-0", [b"f", b"v1"]],
    ]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 3]]


def test_xnack_noack_claim_still_moves_nacked_entry_to_reader(s):
    setup_read(s, 1)
    nack(s, "FAIL", "1-0")
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "NOACK", "CLAIM", 0, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], NOW, 1]]]]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 2]]


def test_xnack_block_claim_wakes_up_on_nacked_entries(s):
    setup_read(s, 2)
    reader = Blocked(
        s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 5000, "CLAIM", 1000, "STREAMS", "s", ">"
    )
    assert reader.blocked
    nack(s, "FAIL", "1-0", "2-0")
    assert reader.wait() == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], NOW, 1],
                [b"2-0", [b"f", b"v2"], NOW, 1],
            ],
        ]
    ]
    assert pending(s, "s", "g", "c2") == [[b"1-0", b"c2", 0, 2], [b"2-0", b"c2", 0, 2]]


def test_xnack_with_no_entry_nacked_does_not_wake_claim_readers(s):
    setup_read(s, 1)
    reader = Blocked(
        s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 400, "CLAIM", 1000, "STREAMS", "s", ">"
    )
    assert nack(s, "FAIL", "9-0") == 0
    assert reader.wait() is None
    assert reader.elapsed >= 0.35


# --- reads, consumers, groups --------------------------------------------------------


def test_xnack_pending_history_read_excludes_nacked_entries(s):
    setup_read(s, 3)
    nack(s, "FAIL", "1-0", "3-0")
    reply = x(s, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0-0")
    assert reply == [[b"s", [[b"2-0", [b"f", b"v2"]]]]]


def test_xnack_redelivery_as_new_entry_leaves_the_zone(s):
    setup_read(s, 2)
    nack(s, "FATAL", "1-0", "2-0")
    x(s, "XGROUP", "SETID", "s", "g", "0")
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "COUNT", 1, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"]]]]]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 1], [b"2-0", b"", -1, LLONG_MAX]]
    assert nacked_count(s) == 1


def test_xnack_effect_on_consumer_state_and_xinfo_consumers(s):
    setup_read(s, 3)
    assert xinfo_consumers(s, "s", "g")[0]["pending"] == 3
    nack(s, "FAIL", "1-0", "2-0")
    assert xinfo_consumers(s, "s", "g")[0]["pending"] == 1
    nack(s, "FAIL", "3-0")
    assert pending(s, "s", "g", "c1") == []
    assert xinfo_consumers(s, "s", "g")[0]["pending"] == 0
    assert xinfo_groups(s, "s")[0]["consumers"] == 1


def test_xnack_xgroup_destroy_cleans_up_nacked_entries(s):
    setup_read(s, 2)
    nack(s, "FAIL", "1-0", "2-0")
    assert pending_count(s, "s", "g") == 2
    assert x(s, "XGROUP", "DESTROY", "s", "g") == 1
    x(s, "XGROUP", "CREATE", "s", "grp2", "0")
    assert pending_count(s, "s", "grp2") == 0
    # No group references are left behind: ACKED deletion works at once.
    x(s, "XGROUP", "DESTROY", "s", "grp2")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "1-0", "2-0") == [1, 1]


def test_xnack_xgroup_delconsumer_keeps_nacked_entries(s):
    setup_read(s, 2)
    nack(s, "FAIL", "1-0")
    assert x(s, "XGROUP", "DELCONSUMER", "s", "g", "c1") == 1
    assert pending_count(s, "s", "g") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1]]
    assert nacked_count(s) == 1
    assert x(s, "XCLAIM", "s", "g", "c2", 0, "1-0") == [[b"1-0", [b"f", b"v1"]]]
    assert nacked_count(s) == 0


def test_xnack_xack_of_nacked_entries(s):
    setup_read(s, 3)
    nack(s, "FAIL", "1-0", "2-0")
    assert x(s, "XACK", "s", "g", "2-0", "2-0", "9-0") == 1
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (1, 2)
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1], [b"3-0", b"c1", 0, 1]]
    assert x(s, "XACK", "s", "g", "1-0") == 1
    assert nacked_count(s) == 0
    assert claim_order(s) == [b"3-0"]


def test_xnack_xinfo_stream_full_nacked_count(s):
    setup_read(s, 4)
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (0, 4)
    nack(s, "FAIL", "1-0")
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (1, 4)
    nack(s, "FAIL", "2-0", "3-0")
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (3, 4)
    x(s, "XCLAIM", "s", "g", "c1", 0, "1-0")
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (2, 4)
    x(s, "XACK", "s", "g", "2-0")
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (1, 3)
    x(s, "XACK", "s", "g", "3-0")
    group = full_group(s, "s")
    assert (group["nacked-count"], group["pel-count"]) == (0, 2)
    nack(s, "FAIL", "1-0")
    x(s, "XGROUP", "CREATE", "s", "grp2", "0")
    read_all(s, "s", "grp2", "c2", 4)
    assert nacked_count(s, index=0) == 1
    assert nacked_count(s, index=1) == 0


def test_xnack_xinfo_stream_full_fields_and_delivery_time(s):
    setup_read(s, 2)
    s.advance_clock_ms(40)
    nack(s, "FAIL", "2-0")
    assert full_group_keys(s, "s") == [
        "name",
        "last-delivered-id",
        "entries-read",
        "lag",
        "pel-count",
        "nacked-count",
        "pending",
        "consumers",
    ]
    group = full_group(s, "s")
    assert group["pending"] == [[b"1-0", b"c1", NOW, 1], [b"2-0", b"", 0, 1]]
    assert group["consumers"][0]["pending"] == [[b"1-0", NOW, 1]]
    assert group["consumers"][0]["pel-count"] == 1
    resp3 = x(s, "XINFO", "STREAM", "s", "FULL", protocol=3)[b"groups"][0]
    assert list(resp3)[4:7] == [b"pel-count", b"nacked-count", b"pending"]
    assert resp3[b"nacked-count"] == 1
    # The count limit applies to the group PEL listing too.
    limited = xinfo_full(s, "s", "COUNT", 1)["groups"][0]
    assert limited["pending"] == [[b"1-0", b"c1", NOW, 1]]
    assert limited["nacked-count"] == 1


# --- XPENDING ------------------------------------------------------------------------


def test_xnack_xpending_idle_filter_lets_nacked_entries_through(s):
    setup_read(s, 3)
    s.advance_clock_ms(100)
    x(s, "XCLAIM", "s", "g", "c1", 0, "3-0", "JUSTID")  # 3-0 delivered again just now
    nack(s, "FAIL", "2-0")
    s.advance_clock_ms(50)
    assert x(s, "XPENDING", "s", "g", "IDLE", 120, "-", "+", 10) == [
        [b"1-0", b"c1", 150, 1],
        [b"2-0", b"", -1, 1],
    ]
    assert x(s, "XPENDING", "s", "g", "IDLE", LLONG_MAX, "-", "+", 10) == [[b"2-0", b"", -1, 1]]
    assert x(s, "XPENDING", "s", "g", "IDLE", 0, "-", "+", 10) == [
        [b"1-0", b"c1", 150, 1],
        [b"2-0", b"", -1, 1],
        [b"3-0", b"c1", 50, 1],
    ]
    # A consumer filter never shows NACKed entries.
    assert x(s, "XPENDING", "s", "g", "IDLE", 120, "-", "+", 10, "c1") == [
        [b"1-0", b"c1", 150, 1],
    ]


def test_xnack_xpending_summary(s):
    setup_read(s, 3)
    nack(s, "FAIL", "1-0", "2-0", "3-0")
    assert x(s, "XPENDING", "s", "g") == [3, b"1-0", b"3-0", []]
    assert x(s, "XPENDING", "s", "g", protocol=3) == [3, b"1-0", b"3-0", []]


# --- deletes and trims with each reference policy ------------------------------------


def test_xnack_nacked_entries_persist_after_xdel_and_xtrim(s):
    setup_read(s, 2)
    nack(s, "FAIL", "1-0")
    x(s, "XDEL", "s", "1-0")
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1], [b"2-0", b"c1", 0, 1]]
    s2 = new_store()
    setup_read(s2, 3)
    nack(s2, "FAIL", "1-0")
    assert x(s2, "XTRIM", "s", "MAXLEN", 1) == 2
    assert pending(s2, "s", "g") == [
        [b"1-0", b"", -1, 1],
        [b"2-0", b"c1", 0, 1],
        [b"3-0", b"c1", 0, 1],
    ]
    s2.validate()


def test_xnack_deleted_owned_entry_can_still_be_nacked(s):
    setup_read(s, 2)
    x(s, "XDEL", "s", "1-0")
    assert nack(s, "FAIL", "1-0") == 1
    assert pending(s, "s", "g")[0] == [b"1-0", b"", -1, 1]
    assert nack(s, "FAIL", "1-0", extra=("FORCE",)) == 1


def test_xnack_xdelex_with_each_policy(s):
    setup_read(s, 4)
    nack(s, "FAIL", "1-0", "2-0", "3-0")
    assert x(s, "XDELEX", "s", "KEEPREF", "IDS", 1, "1-0") == [1]
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "2-0") == [2]
    assert x(s, "XDELEX", "s", "DELREF", "IDS", 1, "3-0") == [1]
    assert pending(s, "s", "g") == [
        [b"1-0", b"", -1, 1],
        [b"2-0", b"", -1, 1],
        [b"4-0", b"c1", 0, 1],
    ]
    assert nacked_count(s) == 2
    assert ids_of(x(s, "XRANGE", "s", "-", "+")) == [b"2-0", b"4-0"]
    assert claim_order(s) == [b"2-0", b"4-0"]


def test_xnack_xackdel_with_each_policy(s):
    setup_read(s, 3)
    x(s, "XGROUP", "CREATE", "s", "g2", "0")
    read_all(s, "s", "g2", "d1")
    nack(s, "FAIL", "1-0", "2-0", "3-0")
    nack(s, "SILENT", "1-0", "2-0", "3-0", group="g2")
    assert x(s, "XACKDEL", "s", "g", "ACKED", "IDS", 1, "1-0") == [2]
    assert x(s, "XACKDEL", "s", "g", "KEEPREF", "IDS", 1, "2-0") == [1]
    assert x(s, "XACKDEL", "s", "g", "DELREF", "IDS", 1, "3-0") == [1]
    assert pending(s, "s", "g") == []
    assert pending(s, "s", "g2") == [[b"1-0", b"", -1, 0], [b"2-0", b"", -1, 0]]
    assert (nacked_count(s, index=0), nacked_count(s, index=1)) == (0, 2)
    assert ids_of(x(s, "XRANGE", "s", "-", "+")) == [b"1-0"]
    assert x(s, "XACKDEL", "s", "g2", "ACKED", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XLEN", "s") == 0


def test_xnack_xtrim_delref_removes_nacked_references(s):
    setup_read(s, 4)
    nack(s, "FAIL", "1-0", "3-0", "4-0")
    assert x(s, "XTRIM", "s", "MAXLEN", 1, "DELREF") == 3
    assert pending(s, "s", "g") == [[b"4-0", b"", -1, 1]]
    assert nacked_count(s) == 1
    assert claim_order(s) == [b"4-0"]


def test_xnack_xtrim_acked_keeps_nacked_entries(s):
    setup_read(s, 4)
    x(s, "XACK", "s", "g", "1-0", "3-0")
    nack(s, "FATAL", "2-0")
    assert x(s, "XTRIM", "s", "MAXLEN", 0, "ACKED") == 2
    assert ids_of(x(s, "XRANGE", "s", "-", "+")) == [b"2-0", b"4-0"]
    assert pending(s, "s", "g") == [[b"2-0", b"", -1, LLONG_MAX], [b"4-0", b"c1", 0, 1]]


def test_xnack_xtrim_keepref_leaves_ghost_nacked_entries(s):
    setup_read(s, 3)
    nack(s, "FAIL", "2-0", "1-0")
    assert x(s, "XTRIM", "s", "MINID", "3-0", "KEEPREF") == 2
    assert pending(s, "s", "g") == [
        [b"1-0", b"", -1, 1],
        [b"2-0", b"", -1, 1],
        [b"3-0", b"c1", 0, 1],
    ]
    # A CLAIM read skips the ghosts (they stay in the NACK zone)...
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "CLAIM", 0, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"3-0", [b"f", b"v3"], 0, 1]]]]
    assert nacked_count(s) == 2
    # ... XAUTOCLAIM drops and reports them.
    assert x(s, "XAUTOCLAIM", "s", "g", "c2", 0, "0", "JUSTID") == [
        b"0-0",
        [b"3-0"],
        [b"1-0", b"2-0"],
    ]
    assert nacked_count(s) == 0


def test_xnack_xadd_trim_delref_and_acked(s):
    setup_read(s, 3)
    nack(s, "FAIL", "1-0", "2-0")
    x(s, "XADD", "s", "MAXLEN", 2, "ACKED", "4-0", "f", "v4")
    assert x(s, "XLEN", "s") == 4
    x(s, "XADD", "s", "MAXLEN", 2, "DELREF", "5-0", "f", "v5")
    assert ids_of(x(s, "XRANGE", "s", "-", "+")) == [b"4-0", b"5-0"]
    assert pending(s, "s", "g") == []
    assert nacked_count(s) == 0
