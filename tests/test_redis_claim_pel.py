"""What XREADGROUP ... CLAIM takes from the pending entries list: with the history form,
XACK and XCLAIM, after a consumer is deleted, a group's SETID, trimming and deletion,
and the order of NACKed, idle-pending and new entries under COUNT. The family's
overview is in test_redis_claim.py."""

from __future__ import annotations

from support_claim import claim_read, setup_read, x
from support_streams import (
    LLONG_MAX,
    NOW,
    add_entries,
    ids_of,
    new_store,
    pending,
    read_all,
    xinfo_groups,
)

# --- interplay with the history form, XACK, XCLAIM -----------------------------------


def test_claim_ignored_with_specific_id(s):
    setup_read(s, 3)
    s.advance_clock_ms(100)
    reply = claim_read(s, "c1", 1000, "s", "0")
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"]],
                [b"2-0", [b"f", b"v2"]],
                [b"3-0", [b"f", b"v3"]],
            ],
        ]
    ]
    # The history read is a delivery: counts went up, idle was reset.
    assert pending(s, "s", "g") == [
        [b"1-0", b"c1", 0, 2],
        [b"2-0", b"c1", 0, 2],
        [b"3-0", b"c1", 0, 2],
    ]


def test_claim_xack_removes_messages_from_claim_pool(s):
    setup_read(s, 3)
    assert x(s, "XACK", "s", "g", "1-0", "3-0") == 2
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert reply == [[b"s", [[b"2-0", [b"f", b"v2"], 100, 1]]]]
    assert x(s, "XACK", "s", "g", "2-0") == 1
    s.advance_clock_ms(100)
    assert claim_read(s, "c2", 50, "s", ">") is None


def test_claim_sees_delivery_count_updated_by_xclaim(s):
    setup_read(s, 3)
    s.advance_clock_ms(100)
    assert ids_of(x(s, "XCLAIM", "s", "g", "c3", 50, "2-0", "3-0")) == [b"2-0", b"3-0"]
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    # Oldest delivery first: 1-0 (delivered 200 ms ago), then 2-0 and 3-0.
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 200, 1],
                [b"2-0", [b"f", b"v2"], 100, 2],
                [b"3-0", [b"f", b"v3"], 100, 2],
            ],
        ]
    ]


def test_claim_forced_entries_are_claimable(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    assert x(s, "XCLAIM", "s", "g", "c3", 0, "1-0", "2-0", "FORCE", "JUSTID") == [
        b"1-0",
        b"2-0",
    ]
    reply = claim_read(s, "c2", 0, "s", ">", extra=("COUNT", 2))
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 0, 1], [b"2-0", [b"f", b"v2"], 0, 1]]]]


def test_claim_verify_claiming_order(s):
    add_entries(s, "s", 6)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1", 10)
    for n, ago in zip(range(1, 7), (50000, 40000, 30000, 20000, 2000, 1000)):
        x(s, "XCLAIM", "s", "g", "c1", 0, f"{n}-0", "TIME", NOW - ago, "JUSTID")
    reply = claim_read(s, "c2", 10000, "s", ">", extra=("COUNT", 10))
    assert [(e[0], e[2], e[3]) for e in reply[0][1]] == [
        (b"1-0", 50000, 1),
        (b"2-0", 40000, 1),
        (b"3-0", 30000, 1),
        (b"4-0", 20000, 1),
    ]
    reply = claim_read(s, "c2", 1500, "s", ">", extra=("COUNT", 10))
    assert [(e[0], e[2], e[3]) for e in reply[0][1]] == [(b"5-0", 2000, 1)]
    reply = claim_read(s, "c2", 500, "s", ">", extra=("COUNT", 10))
    assert [(e[0], e[2], e[3]) for e in reply[0][1]] == [(b"6-0", 1000, 1)]


def test_claim_order_is_delivery_time_not_id(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1")
    x(s, "XCLAIM", "s", "g", "c1", 0, "3-0", "TIME", NOW - 300, "JUSTID")
    x(s, "XCLAIM", "s", "g", "c1", 0, "1-0", "TIME", NOW - 100, "JUSTID")
    x(s, "XCLAIM", "s", "g", "c1", 0, "2-0", "TIME", NOW - 200, "JUSTID")
    reply = claim_read(s, "c2", 50, "s", ">")
    assert [(e[0], e[2]) for e in reply[0][1]] == [(b"3-0", 300), (b"2-0", 200), (b"1-0", 100)]
    # COUNT takes the oldest deliveries first.
    s2 = new_store()
    add_entries(s2, "s", 3)
    x(s2, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s2, "s", "g", "c1")
    x(s2, "XCLAIM", "s", "g", "c1", 0, "3-0", "TIME", NOW - 300, "JUSTID")
    reply = claim_read(s2, "c2", 0, "s", ">", extra=("COUNT", 1))
    assert reply == [[b"s", [[b"3-0", [b"f", b"v3"], 300, 1]]]]
    s2.validate()


# --- consumers, SETID, trimming ------------------------------------------------------


def test_claim_after_consumer_deleted_with_pending_messages(s):
    setup_read(s, 1)
    assert x(s, "XGROUP", "DELCONSUMER", "s", "g", "c1") == 1
    assert pending(s, "s", "g") == []
    s.advance_clock_ms(100)
    assert claim_read(s, "c2", 50, "s", ">") is None


def test_claim_after_setid_moves_past_pending_messages(s):
    setup_read(s, 2)
    x(s, "XGROUP", "SETID", "s", "g", "2-0")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1], [b"2-0", [b"f", b"v2"], 100, 1]]]]


def test_claim_after_setid_moves_before_pending_messages(s):
    setup_read(s, 2)
    reply = claim_read(s, "c2", 0, "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 0, 1], [b"2-0", [b"f", b"v2"], 0, 1]]]]
    x(s, "XGROUP", "SETID", "s", "g", "0")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    # Claimed first, then the same ids again as "new" entries (which resets their count).
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 100, 2],
                [b"2-0", [b"f", b"v2"], 100, 2],
                [b"1-0", [b"f", b"v1"], 0, 0],
                [b"2-0", [b"f", b"v2"], 0, 0],
            ],
        ]
    ]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 1], [b"2-0", b"c2", 0, 1]]
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1], [b"2-0", [b"f", b"v2"], 100, 1]]]]


def test_claim_when_pending_messages_get_trimmed(s):
    setup_read(s, 3)
    assert x(s, "XTRIM", "s", "MAXLEN", 0) == 3
    s.advance_clock_ms(100)
    assert claim_read(s, "c2", 50, "s", ">") is None
    # The PEL still references the trimmed entries (KEEPREF): nothing was claimed.
    assert pending(s, "s", "g") == [
        [b"1-0", b"c1", 100, 1],
        [b"2-0", b"c1", 100, 1],
        [b"3-0", b"c1", 100, 1],
    ]


def test_claim_skips_deleted_entries_but_keeps_them_pending(s):
    setup_read(s, 3)
    x(s, "XDEL", "s", "2-0")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1], [b"3-0", [b"f", b"v3"], 100, 1]]]]
    assert pending(s, "s", "g") == [
        [b"1-0", b"c2", 0, 2],
        [b"2-0", b"c1", 100, 1],
        [b"3-0", b"c2", 0, 2],
    ]


def test_claim_skips_deleted_head_when_deciding_to_serve(s):
    # The oldest pending entry is gone from the stream; the next one is not idle enough:
    # nothing is claimable, so nothing is served.
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1", 1)
    s.advance_clock_ms(100)
    read_all(s, "s", "g", "c1", 1)
    x(s, "XDEL", "s", "1-0")
    s.advance_clock_ms(50)
    assert claim_read(s, "c2", 100, "s", ">") is None
    s.advance_clock_ms(50)
    reply = claim_read(s, "c2", 100, "s", ">")
    assert reply == [[b"s", [[b"2-0", [b"f", b"v2"], 100, 1]]]]


def test_claim_count_spans_claimed_and_new(s):
    add_entries(s, "s", 5)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1", 2)
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">", extra=("COUNT", 3))
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 100, 1],
                [b"2-0", [b"f", b"v2"], 100, 1],
                [b"3-0", [b"f", b"v3"], 0, 0],
            ],
        ]
    ]
    reply = claim_read(s, "c2", 50, "s", ">", extra=("COUNT", 2))
    assert reply == [[b"s", [[b"4-0", [b"f", b"v4"], 0, 0], [b"5-0", [b"f", b"v5"], 0, 0]]]]
    assert xinfo_groups(s, "s")[0]["last-delivered-id"] == b"5-0"


def test_claim_order_nacked_then_idle_pending_then_new(s):
    add_entries(s, "s", 6)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    read_all(s, "s", "g", "c1", 2)  # 1-0, 2-0 delivered at NOW
    s.advance_clock_ms(100)
    read_all(s, "s", "g", "c1", 2)  # 3-0, 4-0 delivered at NOW+100
    assert x(s, "XNACK", "s", "g", "FAIL", "IDS", 2, "4-0", "2-0") == 2
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    now = NOW + 200
    assert reply == [
        [
            b"s",
            [
                [b"4-0", [b"f", b"v4"], now, 1],  # NACK zone first, in NACK order
                [b"2-0", [b"f", b"v2"], now, 1],
                [b"1-0", [b"f", b"v1"], 200, 1],  # then idle pending entries, oldest first
                [b"3-0", [b"f", b"v3"], 100, 1],
                [b"5-0", [b"f", b"v5"], 0, 0],  # then new entries
                [b"6-0", [b"f", b"v6"], 0, 0],
            ],
        ]
    ]
    assert pending(s, "s", "g") == [
        [b"1-0", b"c2", 0, 2],
        [b"2-0", b"c2", 0, 2],
        [b"3-0", b"c2", 0, 2],
        [b"4-0", b"c2", 0, 2],
        [b"5-0", b"c2", 0, 1],
        [b"6-0", b"c2", 0, 1],
    ]


def test_claim_nacked_entry_idle_is_unix_time_and_count_before_delivery(s):
    setup_read(s, 1)
    s.advance_clock_ms(1234)
    x(s, "XNACK", "s", "g", "SILENT", "IDS", 1, "1-0")
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 0]]
    reply = claim_read(s, "c2", 0, "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], NOW + 1234, 0]]]]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 1]]


def test_claim_nacked_entry_not_taken_when_min_idle_exceeds_unix_time(s):
    # A NACKed entry's idle is "now - 0": a min-idle-time above the current Unix time
    # in ms is not met, and the claim scan stops at the head of the PEL.
    setup_read(s, 2, count=1)
    x(s, "XNACK", "s", "g", "FAIL", "IDS", 1, "1-0")
    reply = claim_read(s, "c2", NOW + 1, "s", ">")
    assert reply == [[b"s", [[b"2-0", [b"f", b"v2"], 0, 0]]]]
    assert pending(s, "s", "g")[0] == [b"1-0", b"", -1, 1]
    reply = claim_read(s, "c3", NOW, "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], NOW, 1]]]]


def test_claim_force_nacked_entry_beyond_last_delivered_id(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    assert x(s, "XNACK", "s", "g", "FAIL", "IDS", 1, "3-0", "FORCE") == 1
    reply = claim_read(s, "c1", 0, "s", ">")
    # Claimed from the NACK zone first, then delivered again as a new entry.
    assert reply == [
        [
            b"s",
            [
                [b"3-0", [b"f", b"v3"], NOW, 0],
                [b"1-0", [b"f", b"v1"], 0, 0],
                [b"2-0", [b"f", b"v2"], 0, 0],
                [b"3-0", [b"f", b"v3"], 0, 0],
            ],
        ]
    ]
    assert pending(s, "s", "g") == [
        [b"1-0", b"c1", 0, 1],
        [b"2-0", b"c1", 0, 1],
        [b"3-0", b"c1", 0, 1],
    ]
    group = xinfo_groups(s, "s")[0]
    assert (group["last-delivered-id"], group["entries-read"], group["pending"]) == (
        b"3-0",
        3,
        3,
    )


def test_claim_force_nacked_entry_beyond_last_delivered_id_with_count(s):
    add_entries(s, "s", 3)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    x(s, "XNACK", "s", "g", "FATAL", "IDS", 1, "3-0", "FORCE")
    reply = claim_read(s, "c1", 0, "s", ">", extra=("COUNT", 2))
    assert reply == [
        [
            b"s",
            [
                [b"3-0", [b"f", b"v3"], NOW, LLONG_MAX],
                [b"1-0", [b"f", b"v1"], 0, 0],
            ],
        ]
    ]
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 1], [b"3-0", b"c1", 0, LLONG_MAX]]
    assert xinfo_groups(s, "s")[0]["last-delivered-id"] == b"1-0"


def test_claim_nacked_entry_alone_is_served_without_new_entries(s):
    setup_read(s, 2)
    x(s, "XNACK", "s", "g", "FAIL", "IDS", 1, "2-0")
    reply = claim_read(s, "c2", 1000, "s", ">")
    assert reply == [[b"s", [[b"2-0", [b"f", b"v2"], NOW, 1]]]]
