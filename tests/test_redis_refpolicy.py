"""Consumer-group reference policies (Redis 8.2): XDELEX, XACKDEL and KEEPREF/DELREF/ACKED on
XADD/XTRIM -- ports of Redis's own tests, made exact, plus the points of our issue.

Guards the behaviours checked by "XADD with MAXLEN option and ACKED/DELREF option",
"XTRIM with approx and ACKED/DELREF deletes entries correctly", the XTRIM ~/LIMIT tests
and the "XDELEX ..." tests of Redis's tests/unit/type/stream.tcl, and by the "XACKDEL ..."
and "XGROUP DESTROY removes all consumer group references / correctly manage
min_cgroup_last_id cache" tests of tests/unit/type/stream-cgroups.tcl, with the
semantics of src/t_stream.c (streamTrim, streamParseAddOrTrimArgsOrReply,
streamParseAckDelArgsOrReply, xdelexCommand, xackdelCommand, streamEntryIsReferenced,
streamCleanupEntryCGroupRefs, streamUpdateCGroupLastId, streamDestroyCG) and the notes
of the pull request (shared/seeds/002_*):

* KEEPREF deletes and leaves PEL references; DELREF deletes and drops every group's
  reference; ACKED deletes only entries every group has read (id <= its last id) and
  acknowledged (in no PEL);
* with DELREF or ACKED, "~" trimming trims exactly inside nodes (it still skips
  unacknowledged entries), while KEEPREF removes whole nodes only; LIMIT bounds the
  work per node and LIMIT 0 means unlimited;
* per-id replies of XDELEX/XACKDEL (-1 / 1 / 2) and their argument errors.

Skipped Redis tests (persistence, DEBUG): "XADD with ACKED option doesn't crash after
DEBUG RELOAD", and the AOF propagation tests of trimming ("XADD with MAXLEN > xlen can
propagate correctly" and the other "... can propagate correctly" tests).
"""

from __future__ import annotations

import pytest
from support_streams import (
    NOW,
    add_entries,
    error_of,
    ids_of,
    new_store,
    pending,
    pending_count,
    read_all,
    xinfo_stream,
)


def x(store, *args, **kw):
    return store.execute_command(*args, **kw)


def store_with_nodes(node_max_entries):
    return new_store(config={"stream-node-max-entries": node_max_entries})


def stream_ids(store, key="s"):
    return ids_of(x(store, "XRANGE", key, "-", "+"))


def idrange(first, last):
    return [f"{i}-0".encode() for i in range(first, last + 1)]


# --- XADD / XTRIM with a policy ------------------------------------------------------


def test_xadd_with_maxlen_and_acked(s):
    add_entries(s, "s", 5)
    x(s, "XGROUP", "CREATE", "s", "mygroup", "0")
    # Nothing has been read: nothing may go.
    x(s, "XADD", "s", "MAXLEN", "=", 1, "ACKED", "6-0", "f", "v")
    assert x(s, "XLEN", "s") == 6
    records = x(s, "XREADGROUP", "GROUP", "mygroup", "c1", "COUNT", 1, "STREAMS", "s", ">")
    assert x(s, "XACK", "s", "mygroup", records[0][1][0][0]) == 1
    assert pending_count(s, "s", "mygroup") == 0
    x(s, "XADD", "s", "MAXLEN", "=", 1, "ACKED", "7-0", "f", "v")
    assert stream_ids(s) == idrange(2, 7)
    records = x(s, "XREADGROUP", "GROUP", "mygroup", "c1", "STREAMS", "s", ">")
    assert x(s, "XACK", "s", "mygroup", *ids_of(records[0][1])) == 6
    new_id = x(s, "XADD", "s", "MAXLEN", "=", 1, "ACKED", "*", "f", "v")
    # The new entry is not read yet, so it stays whatever MAXLEN says.
    assert stream_ids(s) == [new_id] == [f"{NOW}-0".encode()]


def test_xadd_with_maxlen_and_delref(s):
    add_entries(s, "s", 5)
    x(s, "XGROUP", "CREATE", "s", "mygroup", "0")
    read_all(s, "s", "mygroup", "c1", 1)
    x(s, "XADD", "s", "MAXLEN", "=", 1, "DELREF", "*", "f", "v")
    assert x(s, "XLEN", "s") == 1
    assert x(s, "XPENDING", "s", "mygroup") == [0, None, None, None]


def test_xadd_with_maxlen_and_keepref_default(s):
    add_entries(s, "s", 5)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1", 2)
    x(s, "XADD", "s", "MAXLEN", 1, "6-0", "f", "v")
    assert stream_ids(s) == [b"6-0"]
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 1], [b"2-0", b"c1", 0, 1]]
    x(s, "XADD", "s", "MAXLEN", 0, "KEEPREF", "7-0", "f", "v")
    assert x(s, "XLEN", "s") == 0
    assert pending_count(s, "s", "g") == 2


def test_xtrim_acked_counts_noack_reads_as_acknowledged(s):
    add_entries(s, "s", 4)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    x(s, "XREADGROUP", "GROUP", "g", "c1", "COUNT", 3, "NOACK", "STREAMS", "s", ">")
    assert x(s, "XTRIM", "s", "MAXLEN", 0, "ACKED") == 3
    assert stream_ids(s) == [b"4-0"]


def test_xtrim_acked_with_several_groups(s):
    add_entries(s, "s", 6)
    x(s, "XGROUP", "CREATE", "s", "g1", "0")
    x(s, "XGROUP", "CREATE", "s", "g2", "3-0")
    read_all(s, "s", "g1", "c1", 4)  # g1 read 1..4
    x(s, "XACK", "s", "g1", "1-0", "2-0", "4-0")
    # 1,2: acked by g1, before g2's last id -> go; 3: pending in g1; 4: acked by g1 but
    # not read by g2 (4-0 > 3-0); 5,6: unread by g1.
    assert x(s, "XTRIM", "s", "MINID", "7-0", "ACKED") == 2
    assert stream_ids(s) == idrange(3, 6)
    read_all(s, "s", "g2", "d1")
    x(s, "XACK", "s", "g2", "4-0", "5-0", "6-0")
    assert x(s, "XTRIM", "s", "MINID", "7-0", "ACKED") == 1
    assert stream_ids(s) == [b"3-0", b"5-0", b"6-0"]


def test_xtrim_acked_follows_setid_backwards(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "$")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "3-0") == [1]
    x(s, "XGROUP", "SETID", "s", "g", "1-0")
    assert x(s, "XTRIM", "s", "MAXLEN", 0, "ACKED") == 1
    assert stream_ids(s) == [b"2-0"]
    x(s, "XGROUP", "SETID", "s", "g", "$")
    assert x(s, "XTRIM", "s", "MAXLEN", 0, "ACKED") == 1
    assert x(s, "XLEN", "s") == 0


def test_xtrim_acked_can_leave_more_than_maxlen(s):
    add_entries(s, "s", 5)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1")
    x(s, "XACK", "s", "g", "2-0", "5-0")
    assert x(s, "XTRIM", "s", "MAXLEN", 1, "ACKED") == 2
    assert stream_ids(s) == [b"1-0", b"3-0", b"4-0"]
    info = xinfo_stream(s, "s")
    assert (
        info["length"],
        info["recorded-first-entry-id"],
        info["entries-added"],
        info["max-deleted-entry-id"],
    ) == (3, b"1-0", 5, b"0-0")


def test_xtrim_delref_cleans_every_group(s):
    add_entries(s, "s", 4)
    for g in ("g1", "g2"):
        x(s, "XGROUP", "CREATE", "s", g, "0")
        read_all(s, "s", g, "c" + g)
    assert x(s, "XTRIM", "s", "MINID", "3-0", "DELREF") == 2
    assert pending(s, "s", "g1") == [[b"3-0", b"cg1", 0, 1], [b"4-0", b"cg1", 0, 1]]
    assert pending(s, "s", "g2") == [[b"3-0", b"cg2", 0, 1], [b"4-0", b"cg2", 0, 1]]
    info = xinfo_stream(s, "s")
    assert (info["recorded-first-entry-id"], info["length"]) == (b"3-0", 2)


def test_xtrim_with_approx_and_acked_deletes_entries_correctly():
    s = store_with_nodes(2)
    add_entries(s, "s", 5)
    x(s, "XGROUP", "CREATE", "s", "mygroup", "0")
    read_all(s, "s", "mygroup", "consumer1")
    x(s, "XACK", "s", "mygroup", "1-0", "2-0", "4-0")
    assert x(s, "XTRIM", "s", "MINID", "~", "6-0", "ACKED") == 3
    assert x(s, "XRANGE", "s", "-", "+") == [[b"3-0", [b"f", b"v3"]], [b"5-0", [b"f", b"v5"]]]
    s.validate()


def test_xtrim_with_approx_and_delref_deletes_entries_correctly():
    s = store_with_nodes(2)
    add_entries(s, "s", 4)
    x(s, "XGROUP", "CREATE", "s", "mygroup", "0")
    read_all(s, "s", "mygroup", "consumer1")
    assert x(s, "XTRIM", "s", "MINID", "~", "5-0", "DELREF") == 4
    assert x(s, "XLEN", "s") == 0
    assert x(s, "XPENDING", "s", "mygroup") == [0, None, None, None]
    s.validate()


@pytest.mark.parametrize(
    "policy, deleted, first",
    [("KEEPREF", 10, 11), ("DELREF", 13, 14), ("ACKED", 13, 14)],
)
def test_xtrim_maxlen_approx_trims_inside_nodes_except_keepref(policy, deleted, first):
    s = store_with_nodes(10)
    add_entries(s, "s", 25)  # nodes 1..10, 11..20, 21..25
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 12, policy) == deleted
    assert stream_ids(s) == idrange(first, 25)
    assert xinfo_stream(s, "s")["recorded-first-entry-id"] == f"{first}-0".encode()
    s.validate()


@pytest.mark.parametrize(
    "policy, deleted, first",
    [("KEEPREF", 10, 11), ("DELREF", 13, 14), ("ACKED", 13, 14)],
)
def test_xtrim_minid_approx_trims_inside_nodes_except_keepref(policy, deleted, first):
    s = store_with_nodes(10)
    add_entries(s, "s", 25)
    assert x(s, "XTRIM", "s", "MINID", "~", "14-0", policy) == deleted
    assert stream_ids(s) == idrange(first, 25)
    s.validate()


@pytest.mark.parametrize("policy, expected_len", [("KEEPREF", 15), ("DELREF", 12), ("ACKED", 12)])
def test_xadd_approx_trim_inside_nodes_except_keepref(policy, expected_len):
    s = store_with_nodes(10)
    add_entries(s, "s", 24)
    x(s, "XADD", "s", "MAXLEN", "~", 12, policy, "25-0", "f", "v25")
    assert x(s, "XLEN", "s") == expected_len
    assert stream_ids(s) == idrange(26 - expected_len, 25)
    s.validate()


def test_xtrim_approx_acked_skips_unacknowledged_entries_inside_a_node():
    s = store_with_nodes(10)
    add_entries(s, "s", 25)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1")
    acked = [f"{i}-0" for i in range(1, 26) if i not in (3, 12)]
    x(s, "XACK", "s", "g", *acked)
    # Node 1 (1..10) is fully eligible: everything but 3 goes; node 2 is not eligible
    # but ACKED still trims inside it, skipping 12, until 12 entries are left.
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 12, "ACKED") == 13
    assert stream_ids(s) == [b"3-0", b"12-0"] + idrange(16, 25)
    assert pending(s, "s", "g") == [[b"3-0", b"c1", 0, 1], [b"12-0", b"c1", 0, 1]]
    s.validate()


@pytest.mark.parametrize(
    "limit, policy, deleted",
    [
        (15, "DELREF", 10),
        (0, "DELREF", 13),
        (15, "KEEPREF", 10),
        (0, "KEEPREF", 10),
        (9, "DELREF", 0),
        (10, "ACKED", 10),
        (20, "ACKED", 13),
    ],
)
def test_xtrim_approx_limit_with_policies(limit, policy, deleted):
    s = store_with_nodes(10)
    add_entries(s, "s", 25)
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 12, "LIMIT", limit, policy) == deleted
    assert x(s, "XLEN", "s") == 25 - deleted
    s.validate()


def test_xtrim_with_approx_is_limited_and_limit_0_is_unlimited():
    s = store_with_nodes(1)
    for _ in range(102):
        x(s, "XADD", "s", "*", "xitem", "v")
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 1) == 100
    assert x(s, "XLEN", "s") == 2
    s2 = store_with_nodes(1)
    for _ in range(102):
        x(s2, "XADD", "s", "*", "xitem", "v")
    assert x(s2, "XTRIM", "s", "MAXLEN", "~", 1, "LIMIT", 0) == 101
    assert x(s2, "XLEN", "s") == 1
    s3 = store_with_nodes(1)
    for _ in range(102):
        x(s3, "XADD", "s", "*", "xitem", "v")
    assert x(s3, "XTRIM", "s", "MAXLEN", "~", 1, "LIMIT", 0, "DELREF") == 101
    for store in (s, s2, s3):
        store.validate()


def test_xtrim_with_limit_deletes_no_more_than_limit():
    s = store_with_nodes(2)
    add_entries(s, "s", 3)
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 0, "LIMIT", 1) == 0
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 0, "LIMIT", 2) == 2
    s.validate()


def test_xadd_with_limit_consecutive_calls():
    s = store_with_nodes(10)
    for _ in range(100):
        x(s, "XADD", "s", "*", "xitem", "v")
    x(s, "XADD", "s", "MAXLEN", "~", 55, "LIMIT", 30, "*", "xitem", "v")
    assert x(s, "XLEN", "s") == 71
    x(s, "XADD", "s", "MAXLEN", "~", 55, "LIMIT", 30, "*", "xitem", "v")
    assert x(s, "XLEN", "s") == 62
    # DELREF may trim inside the first node that cannot go whole.
    x(s, "XADD", "s", "MAXLEN", "~", 55, "LIMIT", 30, "DELREF", "*", "xitem", "v")
    assert x(s, "XLEN", "s") == 55
    s.validate()


def test_xtrim_approx_and_exact_basic():
    s = store_with_nodes(100)
    for j in range(1000):
        x(s, "XADD", "s", "*", "xitem" if j % 10 else "yitem", j)
    assert x(s, "XTRIM", "s", "MAXLEN", 666) == 334
    assert x(s, "XTRIM", "s", "MAXLEN", "=", 555) == 111
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 444) == 55
    assert x(s, "XLEN", "s") == 500
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 400) == 100
    assert x(s, "XLEN", "s") == 400
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 350, "DELREF") == 50
    assert x(s, "XTRIM", "s", "MAXLEN", "~", 300) == 50
    assert x(s, "XLEN", "s") == 300
    s.validate()


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("MAXLEN", 1, "LIMIT", 30),
            "ERR syntax error, LIMIT cannot be used without the special ~ option",
        ),
        (
            ("MAXLEN", "=", 1, "LIMIT", 30, "DELREF"),
            "ERR syntax error, LIMIT cannot be used without the special ~ option",
        ),
        (
            ("LIMIT", 10, "ACKED"),
            "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ),
        (("LIMIT", 0), "ERR syntax error, XTRIM must be called with a trimming strategy"),
        (("ACKED", "DELREF"), "ERR syntax error"),
        (("MAXLEN", 1, "KEEPREF", "KEEPREF"), "ERR syntax error"),
        (("MAXLEN", 1, "ACKED", "DELREF"), "ERR syntax error"),
        (("MAXLEN", 1, "NOMKSTREAM"), "ERR syntax error"),
        (
            ("MAXLEN", 1, "MINID", 1),
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
        ),
        (("MAXLEN", "~", -1, "DELREF"), "ERR The MAXLEN argument must be >= 0."),
        (("MAXLEN", "~", 1, "LIMIT", -1), "ERR The LIMIT argument must be >= 0."),
        (
            ("MINID", "~", "x", "ACKED"),
            "ERR Invalid stream ID specified as stream command argument",
        ),
    ],
)
def test_xtrim_policy_syntax_errors(s, args, message):
    add_entries(s, "s", 3)
    assert error_of(s, "XTRIM", "s", *args) == message
    assert x(s, "XLEN", "s") == 3


def test_xadd_policy_syntax_errors(s):
    assert error_of(s, "XADD", "s", "KEEPREF", "DELREF", "*", "f", "v") == (
        "ERR Invalid stream ID specified as stream command argument"
    )
    assert error_of(s, "XADD", "s", "ACKED", "ACKED", "*", "f", "v") == (
        "ERR Invalid stream ID specified as stream command argument"
    )
    assert error_of(s, "XADD", "s", "MAXLEN", 1, "LIMIT", 5, "ACKED", "*", "f", "v") == (
        "ERR syntax error, LIMIT cannot be used without the special ~ option"
    )
    assert x(s, "EXISTS", "s") == 0
    # A policy without a trimming strategy is accepted and does nothing.
    assert x(s, "XADD", "s", "ACKED", "1-0", "f", "v") == b"1-0"
    assert x(s, "XADD", "s", "delref", "2-0", "f", "v") == b"2-0"
    assert x(s, "XLEN", "s") == 2


# --- XDELEX --------------------------------------------------------------------------


def test_xdelex_wrong_number_of_args(s):
    assert error_of(s, "XDELEX", "s", "DELREF") == (
        "ERR wrong number of arguments for 'xdelex' command"
    )
    assert error_of(s, "XDELEX", "s", "IDS", 1) == (
        "ERR wrong number of arguments for 'xdelex' command"
    )


def test_xdelex_on_a_missing_key(s):
    assert x(s, "XDELEX", "nonexist", "IDS", 2, "1-1", "2-2") == [-1, -1]
    # Ids are not even parsed when there is no stream.
    assert x(s, "XDELEX", "nonexist", "ACKED", "IDS", 1, "bad-id") == [-1]
    assert x(s, "EXISTS", "nonexist") == 0


def test_xdelex_ids_parameter_validation(s):
    x(s, "XADD", "s", "1-0", "f", "v")
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    for bad in ("abc", 0, -5):
        assert error_of(s, "XDELEX", "s", "IDS", bad, "1-1") == (
            "ERR Number of IDs must be a positive integer"
        )
    assert error_of(s, "XDELEX", "s", "IDS", 3, "1-1", "2-2") == (
        "ERR The `numids` parameter must match the number of arguments"
    )
    assert error_of(s, "XDELEX", "s", "IDS", 1, "1-1", "2-2") == "ERR syntax error"
    assert error_of(s, "XDELEX", "s", "IDS", 2, "1-0", "bad") == (
        "ERR Invalid stream ID specified as stream command argument"
    )
    assert x(s, "XLEN", "s") == 1  # nothing deleted by a failing call
    assert x(s, "XDELEX", "s", "IDS", 2, "1-1", "2-2") == [-1, -1]


@pytest.mark.parametrize(
    "opts",
    [("KEEPREF", "DELREF"), ("KEEPREF", "ACKED"), ("ACKED", "DELREF"), ("ACKED", "ACKED")],
)
def test_xdelex_policies_are_mutually_exclusive(s, opts):
    x(s, "XADD", "s", "1-0", "f", "v")
    assert error_of(s, "XDELEX", "s", *opts, "IDS", 1, "1-1") == "ERR syntax error"
    assert error_of(s, "XDELEX", "s", opts[0], "IDS", 1, "1-1", opts[1]) == "ERR syntax error"


def test_xdelex_wrongtype_comes_first(s):
    x(s, "SET", "str", "v")
    assert error_of(s, "XDELEX", "str", "BADOPT", "IDS", 0, "x") == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )


def test_xdelex_policy_after_ids_and_duplicate_ids(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1")
    assert x(s, "XDELEX", "s", "IDS", 3, "1-0", "1-0", "9-0", "DELREF") == [1, -1, -1]
    assert pending(s, "s", "g") == [[b"2-0", b"c1", 0, 1], [b"3-0", b"c1", 0, 1]]
    assert x(s, "XDELEX", "s", "IDS", 1, "3-0") == [1]  # default KEEPREF
    assert pending(s, "s", "g") == [[b"2-0", b"c1", 0, 1], [b"3-0", b"c1", 0, 1]]


def test_xdelex_with_delref_removes_entry_from_all_pels(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "group1", "0")
    x(s, "XGROUP", "CREATE", "s", "group2", "0")
    read_all(s, "s", "group1", "consumer1")
    read_all(s, "s", "group2", "consumer2")
    assert x(s, "XDELEX", "s", "DELREF", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XLEN", "s") == 0
    assert x(s, "XPENDING", "s", "group1") == [0, None, None, None]
    assert x(s, "XPENDING", "s", "group2") == [0, None, None, None]
    info = xinfo_stream(s, "s")
    assert (info["max-deleted-entry-id"], info["recorded-first-entry-id"]) == (b"2-0", b"0-0")


def test_xdelex_with_acked_only_deletes_messages_acknowledged_by_all_groups(s):
    add_entries(s, "s", 2)
    for g in ("group1", "group2", "group3"):
        x(s, "XGROUP", "CREATE", "s", g, "0")
    read_all(s, "s", "group1", "consumer1")
    read_all(s, "s", "group2", "consumer2")
    x(s, "XACK", "s", "group1", "1-0", "2-0")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "1-0", "2-0") == [2, 2]
    x(s, "XACK", "s", "group2", "1-0", "2-0")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "1-0", "2-0") == [2, 2]
    read_all(s, "s", "group3", "consumer3")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "1-0", "2-0") == [2, 2]
    assert x(s, "XLEN", "s") == 2
    x(s, "XACK", "s", "group3", "1-0", "2-0")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XLEN", "s") == 0


def test_xdelex_with_acked_and_new_consumer_groups(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "group1", "0")
    read_all(s, "s", "group1", "consumer1")
    assert x(s, "XACK", "s", "group1", "1-0", "2-0", "3-0") == 3
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "1-0") == [1]
    x(s, "XGROUP", "CREATE", "s", "group2", "0")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "2-0") == [2]
    read_all(s, "s", "group2", "consumer1")
    assert x(s, "XACK", "s", "group2", "2-0", "3-0") == 2
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "2-0", "3-0") == [1, 1]


def test_xdelex_with_keepref(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "group1", "0")
    x(s, "XGROUP", "CREATE", "s", "group2", "0")
    read_all(s, "s", "group1", "consumer1")
    read_all(s, "s", "group2", "consumer2")
    assert x(s, "XDELEX", "s", "KEEPREF", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XLEN", "s") == 0
    assert x(s, "XPENDING", "s", "group1") == [2, b"1-0", b"2-0", [[b"consumer1", b"2"]]]
    assert x(s, "XPENDING", "s", "group2") == [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]


def test_xdelex_acked_on_ids_missing_from_the_stream(s):
    add_entries(s, "s", 3)
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "9-0", "2-0") == [-1, 1]
    x(s, "XGROUP", "CREATE", "s", "g", "1-0")
    # Not read by the group yet means still referenced, even if there is no such entry.
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 3, "9-0", "1-0", "0-5") == [2, 1, -1]
    read_all(s, "s", "g", "c1")
    x(s, "XDEL", "s", "3-0")
    # A deleted entry still in the PEL is referenced too.
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "3-0", "2-0") == [2, -1]


def test_xdelex_delref_on_a_deleted_entry_cleans_the_pel(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1")
    x(s, "XDEL", "s", "1-0")
    assert x(s, "XDELEX", "s", "DELREF", "IDS", 1, "1-0") == [-1]
    assert pending(s, "s", "g") == [[b"2-0", b"c1", 0, 1]]


def test_xdelex_updates_first_entry_and_tombstone(s):
    add_entries(s, "s", 4)
    assert x(s, "XDELEX", "s", "IDS", 2, "1-0", "3-0") == [1, 1]
    info = xinfo_stream(s, "s")
    assert (
        info["length"],
        info["recorded-first-entry-id"],
        info["max-deleted-entry-id"],
        info["entries-added"],
    ) == (2, b"2-0", b"3-0", 4)


def test_xdelex_with_many_ids(s):
    x(s, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    ids = [f"{i}-1" for i in range(50)]
    for i in ids[::2]:
        x(s, "XADD", "s", i, "f", "v")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 50, *ids) == [2] * 50
    x(s, "XGROUP", "SETID", "s", "g", "$")
    # 49-1 is past the group's last id (48-1): "not read yet" even with no such entry.
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 50, *ids) == [
        1 if n % 2 == 0 else -1 for n in range(49)
    ] + [2]
    assert x(s, "XLEN", "s") == 0


# --- XGROUP DESTROY and the cached minimum last id -----------------------------------


def test_xgroup_destroy_removes_all_consumer_group_references(s):
    for j in range(5):
        x(s, "XADD", "s", f"{j}-1", "item", j)
    x(s, "XGROUP", "CREATE", "s", "mygroup", "0")
    read_all(s, "s", "mygroup", "consumer1")
    assert pending_count(s, "s", "mygroup") == 5
    ids = [f"{j}-1" for j in range(5)]
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 5, *ids) == [2, 2, 2, 2, 2]
    x(s, "XGROUP", "DESTROY", "s", "mygroup")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 5, *ids) == [1, 1, 1, 1, 1]
    assert x(s, "XLEN", "s") == 0


def test_xgroup_destroy_updates_the_minimum_group_last_id(s):
    add_entries(s, "s", 5)
    x(s, "XGROUP", "CREATE", "s", "group1", "1-0")
    x(s, "XGROUP", "CREATE", "s", "group2", "3-0")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "1-0") == [1]
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "2-0") == [2]
    x(s, "XGROUP", "DESTROY", "s", "group1")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "2-0") == [1]
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "3-0", "4-0") == [1, 2]


def test_minimum_group_last_id_follows_reads_and_setid(s):
    add_entries(s, "s", 6)
    x(s, "XGROUP", "CREATE", "s", "g1", "0")
    x(s, "XGROUP", "CREATE", "s", "g2", "0")
    x(s, "XREADGROUP", "GROUP", "g1", "c", "NOACK", "STREAMS", "s", ">")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "1-0") == [2]
    x(s, "XREADGROUP", "GROUP", "g2", "c", "COUNT", 2, "NOACK", "STREAMS", "s", ">")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "1-0", "3-0") == [1, 2]
    x(s, "XGROUP", "SETID", "s", "g2", "5-0")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "3-0", "6-0") == [1, 2]
    x(s, "XGROUP", "SETID", "s", "g1", "0")  # backwards: everything is unread again
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 1, "4-0") == [2]
    x(s, "XGROUP", "CREATE", "s", "g3", "$")
    x(s, "XGROUP", "SETID", "s", "g1", "$")
    x(s, "XGROUP", "SETID", "s", "g2", "$")
    assert x(s, "XDELEX", "s", "ACKED", "IDS", 2, "4-0", "6-0") == [1, 1]


# --- XACKDEL -------------------------------------------------------------------------


@pytest.mark.parametrize("args", [(), ("s",), ("s", "g"), ("s", "g", "IDS"), ("s", "g", "IDS", 1)])
def test_xackdel_wrong_number_of_args(s, args):
    assert error_of(s, "XACKDEL", *args) == "ERR wrong number of arguments for 'xackdel' command"


def test_xackdel_on_missing_key_or_group(s):
    assert x(s, "XACKDEL", "s", "g", "IDS", 2, "1-1", "2-2") == [-1, -1]
    x(s, "XADD", "s", "1-0", "f", "v")
    assert x(s, "XACKDEL", "s", "g", "IDS", 2, "1-1", "2-2") == [-1, -1]
    # Ids are not parsed when there is no group to act on; the options are.
    assert x(s, "XACKDEL", "s", "g", "DELREF", "IDS", 1, "bad-id") == [-1]
    assert error_of(s, "XACKDEL", "nokey", "g", "IDS", 0, "1-0") == (
        "ERR Number of IDs must be a positive integer"
    )
    x(s, "SET", "str", "v")
    assert error_of(s, "XACKDEL", "str", "g", "IDS", 1, "1-0") == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )


def test_xackdel_ids_parameter_validation(s):
    x(s, "XADD", "s", "1-0", "f", "v")
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    for bad in ("abc", 0, -5):
        assert error_of(s, "XACKDEL", "s", "g", "IDS", bad, "1-1") == (
            "ERR Number of IDs must be a positive integer"
        )
    assert error_of(s, "XACKDEL", "s", "g", "IDS", 3, "1-1", "2-2") == (
        "ERR The `numids` parameter must match the number of arguments"
    )
    assert error_of(s, "XACKDEL", "s", "g", "IDS", 1, "1-1", "2-2") == "ERR syntax error"
    assert error_of(s, "XACKDEL", "s", "g", "IDS", 1, "bad") == (
        "ERR Invalid stream ID specified as stream command argument"
    )


@pytest.mark.parametrize("opts", [("KEEPREF", "DELREF"), ("KEEPREF", "ACKED"), ("DELREF", "ACKED")])
def test_xackdel_policies_are_mutually_exclusive(s, opts):
    assert error_of(s, "XACKDEL", "s", "g", *opts, "IDS", 1, "1-1") == "ERR syntax error"


def test_xackdel_with_delref_removes_entry_from_all_pels(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "group1", "0")
    x(s, "XGROUP", "CREATE", "s", "group2", "0")
    read_all(s, "s", "group1", "consumer1")
    read_all(s, "s", "group2", "consumer2")
    assert x(s, "XACKDEL", "s", "group1", "DELREF", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XLEN", "s") == 0
    assert x(s, "XPENDING", "s", "group1") == [0, None, None, None]
    assert x(s, "XPENDING", "s", "group2") == [0, None, None, None]
    assert x(s, "XACKDEL", "s", "group2", "DELREF", "IDS", 2, "1-0", "2-0") == [-1, -1]


def test_xackdel_with_acked_only_deletes_messages_acknowledged_by_all_groups(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "group1", "0")
    x(s, "XGROUP", "CREATE", "s", "group2", "0")
    read_all(s, "s", "group1", "consumer1")
    read_all(s, "s", "group2", "consumer2")
    assert x(s, "XACKDEL", "s", "group1", "ACKED", "IDS", 2, "1-0", "2-0") == [2, 2]
    assert x(s, "XLEN", "s") == 2
    assert x(s, "XPENDING", "s", "group1") == [0, None, None, None]
    assert x(s, "XPENDING", "s", "group2") == [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]
    assert x(s, "XACKDEL", "s", "group2", "ACKED", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XLEN", "s") == 0
    assert x(s, "XPENDING", "s", "group2") == [0, None, None, None]


def test_xackdel_with_keepref(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "group1", "0")
    x(s, "XGROUP", "CREATE", "s", "group2", "0")
    read_all(s, "s", "group1", "consumer1")
    read_all(s, "s", "group2", "consumer2")
    assert x(s, "XACKDEL", "s", "group1", "KEEPREF", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XLEN", "s") == 0
    assert x(s, "XPENDING", "s", "group1") == [0, None, None, None]
    assert x(s, "XPENDING", "s", "group2") == [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]
    # The entries are gone already; acknowledging them still reports "deleted".
    assert x(s, "XACKDEL", "s", "group2", "KEEPREF", "IDS", 2, "1-0", "2-0") == [1, 1]
    assert x(s, "XPENDING", "s", "group2") == [0, None, None, None]


def test_xackdel_only_acts_on_ids_in_the_group_pel(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1", 1)
    # 2-0 exists but was never delivered to the group: not deleted.
    assert x(s, "XACKDEL", "s", "g", "IDS", 3, "2-0", "1-0", "1-0") == [-1, 1, -1]
    assert stream_ids(s) == [b"2-0", b"3-0"]
    info = xinfo_stream(s, "s")
    assert (info["recorded-first-entry-id"], info["max-deleted-entry-id"]) == (b"2-0", b"1-0")


def test_xackdel_policy_after_ids(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    x(s, "XGROUP", "CREATE", "s", "g2", "0")
    read_all(s, "s", "g", "c1")
    read_all(s, "s", "g2", "c2")
    assert x(s, "XACKDEL", "s", "g", "IDS", 1, "1-0", "ACKED") == [2]
    assert x(s, "XACKDEL", "s", "g", "IDS", 1, "2-0", "DELREF") == [1]
    assert pending(s, "s", "g2") == [[b"1-0", b"c2", 0, 1]]


def test_xackdel_with_many_ids(s):
    x(s, "XGROUP", "CREATE", "s", "mygroup", "$", "MKSTREAM")
    ids = [f"{i}-1" for i in range(50)]
    assert x(s, "XACKDEL", "s", "mygroup", "IDS", 50, *ids) == [-1] * 50
    for i in ids:
        x(s, "XADD", "s", i, "f", "v")
    read_all(s, "s", "mygroup", "c1")
    assert x(s, "XACKDEL", "s", "mygroup", "IDS", 50, *ids) == [1] * 50
    assert x(s, "XLEN", "s") == 0
    assert x(s, "PING") == b"PONG"
