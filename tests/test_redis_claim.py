"""XREADGROUP ... CLAIM min-idle-time (Redis 8.4): ports of Redis's own tests, made exact.
This file holds the reply shape, basic claiming, NOACK and several streams; the rest of
the family is in test_redis_claim_args.py (min-idle-time values and syntax),
test_redis_claim_pel.py (what the pending list gives) and test_redis_claim_block.py
(BLOCK, volume, atomic batches); shared helpers in support_claim.py.

Guards the behaviours checked by the "XREADGROUP CLAIM ..." tests of Redis's
tests/unit/type/stream-cgroups.tcl (the block before the XNACK tests) and the
"XREAD with CLAIM option" error, with the semantics of src/t_stream.c
(xreadCommand, streamReplyWithRange, pelListUpdate) and the design notes of the
CLAIM pull request (shared/seeds/001_*):

* claimed entries come first as [id, fields, idle, delivery-count], the count shown
  being the value before this delivery; new entries follow as [id, fields, 0, 0];
* NACKed entries (delivery time 0) come before idle pending entries, which come in
  delivery-time order, and only those idle >= min-idle-time are taken;
* COUNT spans claimed and new entries; NOACK still moves claimed entries into the
  reader's PEL; BLOCK wakes on new entries, on XNACK and when the clock makes an
  entry claimable; a stream read with an id other than ">" turns CLAIM off for the
  rest of the command; deleted or trimmed PEL entries are skipped;
* argument errors and the XREAD ... CLAIM error.

The store clock is pinned, so where Redis can only assert "idle >= 50" these tests
assert the exact idle time.  Skipped Redis tests (persistence, replication, DEBUG):
"XREADGROUP CLAIM state persists across RDB save/load", "... idle time resets after
RDB reload", "... multiple groups persist correctly", "... NOACK state not persisted",
"... high delivery counts persist in RDB", "XREADGROUP CLAIM delivery count increments
replicated correctly", "XREADGROUP propagates new consumer to replica".
"""

from __future__ import annotations

from support_claim import claim_read, setup_read, x
from support_streams import (
    add_entries,
    error_of,
    ids_of,
    pending,
    pending_count,
    xinfo_consumers,
    xinfo_groups,
)

# --- reply shape ---------------------------------------------------------------------


def test_claim_reply_field_types(s):
    setup_read(s, 1)
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1]]]]
    entry = reply[0][1][0]
    assert [type(v) for v in entry] == [bytes, list, int, int]


def test_claim_reply_resp3_shape(s):
    setup_read(s, 1)
    x(s, "XADD", "s", "2-0", "f", "v2")
    s.advance_clock_ms(100)
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "CLAIM", 50, "STREAMS", "s", ">", protocol=3)
    assert reply == {b"s": [[b"1-0", [b"f", b"v1"], 100, 1], [b"2-0", [b"f", b"v2"], 0, 0]]}


# --- basic claiming ------------------------------------------------------------------


def test_claim_returns_unacknowledged_messages(s):
    setup_read(s, 2)
    assert pending_count(s, "s", "g") == 2
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 100, 1],
                [b"2-0", [b"f", b"v2"], 100, 1],
            ],
        ]
    ]
    # Ownership moved to c2, delivery count incremented, idle reset.
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 2], [b"2-0", b"c2", 0, 2]]
    assert x(s, "XPENDING", "s", "g") == [2, b"1-0", b"2-0", [[b"c2", b"2"]]]


def test_claim_respects_min_idle_time_threshold(s):
    setup_read(s, 2)
    s.advance_clock_ms(99)
    assert claim_read(s, "c2", 100, "s", ">") is None
    # idle == min-idle-time is enough (idle >= min-idle-time)
    s.advance_clock_ms(1)
    reply = claim_read(s, "c2", 100, "s", ">")
    assert ids_of(reply[0][1]) == [b"1-0", b"2-0"]
    assert [e[2] for e in reply[0][1]] == [100, 100]


def test_claim_with_count_limit(s):
    setup_read(s, 3)
    assert pending_count(s, "s", "g") == 3
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">", extra=("COUNT", 2))
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 100, 1],
                [b"2-0", [b"f", b"v2"], 100, 1],
            ],
        ]
    ]
    assert pending(s, "s", "g") == [
        [b"1-0", b"c2", 0, 2],
        [b"2-0", b"c2", 0, 2],
        [b"3-0", b"c1", 100, 1],
    ]


def test_claim_without_messages(s):
    x(s, "XADD", "s", "1-0", "f", "v1")
    x(s, "XDEL", "s", "1-0")
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    assert claim_read(s, "c1", 100, "s", ">") is None


def test_claim_without_pending_messages_returns_new_entries_as_four_elements(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    reply = claim_read(s, "c1", 100, "s", ">")
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 0, 0],
                [b"2-0", [b"f", b"v2"], 0, 0],
            ],
        ]
    ]
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 1], [b"2-0", b"c1", 0, 1]]


def test_claim_message_response_format_mixes_claimed_and_new(s):
    setup_read(s, 2, count=1)
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 1]]
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 100, 1],
                [b"2-0", [b"f", b"v2"], 0, 0],
            ],
        ]
    ]


def test_claim_delivery_count(s):
    setup_read(s, 1)
    s.advance_clock_ms(100)
    assert claim_read(s, "c2", 50, "s", ">")[0][1][0][3] == 1
    for _ in range(2):
        s.advance_clock_ms(100)
        claim_read(s, "c3", 50, "s", ">")
    s.advance_clock_ms(100)
    assert claim_read(s, "c3", 50, "s", ">")[0][1][0][3] == 4
    s.advance_clock_ms(100)
    claim_read(s, "c4", 50, "s", ">")
    s.advance_clock_ms(100)
    assert claim_read(s, "c5", 50, "s", ">")[0][1][0][3] == 6
    assert pending(s, "s", "g") == [[b"1-0", b"c5", 0, 7]]


def test_claim_idle_time(s):
    setup_read(s, 1)
    steps = [(100, 50), (70, 60), (80, 70), (20, 10)]
    for advance, min_idle in steps:
        s.advance_clock_ms(advance)
        reply = claim_read(s, "c3", min_idle, "s", ">")
        assert reply[0][1][0][2] == advance


def test_claim_ownership_transfer_and_delivery_counts(s):
    setup_read(s, 3)
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">")
    assert ids_of(reply[0][1]) == [b"1-0", b"2-0", b"3-0"]
    assert pending(s, "s", "g") == [
        [b"1-0", b"c2", 0, 2],
        [b"2-0", b"c2", 0, 2],
        [b"3-0", b"c2", 0, 2],
    ]
    consumers = {c["name"]: c["pending"] for c in xinfo_consumers(s, "s", "g")}
    assert consumers == {b"c1": 0, b"c2": 3}


def test_claim_on_non_existing_consumer_creates_it(s):
    setup_read(s, 3)
    s.advance_clock_ms(100)
    reply = claim_read(s, "newbie", 50, "s", ">")
    assert ids_of(reply[0][1]) == [b"1-0", b"2-0", b"3-0"]
    assert [c["name"] for c in xinfo_consumers(s, "s", "g")] == [b"c1", b"newbie"]


def test_claim_on_non_existing_group(s):
    setup_read(s, 3)
    s.advance_clock_ms(100)
    assert error_of(
        s, "XREADGROUP", "GROUP", "nogroup", "c1", "CLAIM", 50, "STREAMS", "s", ">"
    ) == ("NOGROUP No such key 's' or consumer group 'nogroup' in XREADGROUP with GROUP option")


def test_claim_does_not_move_last_delivered_id(s):
    setup_read(s, 2, count=1)
    s.advance_clock_ms(100)
    claim_read(s, "c2", 50, "s", ">", extra=("COUNT", 1))
    group = xinfo_groups(s, "s")[0]
    assert (group["last-delivered-id"], group["entries-read"], group["lag"]) == (b"1-0", 1, 1)


def test_claim_updates_reader_activity(s):
    setup_read(s, 1)
    s.advance_clock_ms(500)
    claim_read(s, "c2", 50, "s", ">")
    s.advance_clock_ms(7)
    by_name = {c["name"]: c for c in xinfo_consumers(s, "s", "g")}
    assert (by_name[b"c2"]["pending"], by_name[b"c2"]["idle"], by_name[b"c2"]["inactive"]) == (
        1,
        7,
        7,
    )
    assert (by_name[b"c1"]["pending"], by_name[b"c1"]["inactive"]) == (0, 507)


# --- NOACK ---------------------------------------------------------------------------


def test_claim_with_noack(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "g", "0")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c1", 50, "s", ">", extra=("NOACK",))
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 0, 0],
                [b"2-0", [b"f", b"v2"], 0, 0],
            ],
        ]
    ]
    assert pending_count(s, "s", "g") == 0
    assert claim_read(s, "c1", 50, "s", ">", extra=("NOACK",)) is None


def test_claim_with_noack_and_pending_messages(s):
    setup_read(s, 2, count=1)
    assert pending_count(s, "s", "g") == 1
    s.advance_clock_ms(100)
    reply = claim_read(s, "c1", 50, "s", ">", extra=("NOACK",))
    # The pending entry is claimed (and stays pending), the new one is not added.
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 100, 1],
                [b"2-0", [b"f", b"v2"], 0, 0],
            ],
        ]
    ]
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 2]]
    s.advance_clock_ms(100)
    reply = claim_read(s, "c1", 50, "s", ">", extra=("NOACK",))
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 2]]]]


def test_claim_noack_moves_claimed_entry_to_reader(s):
    setup_read(s, 1)
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">", extra=("NOACK",))
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1]]]]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 2]]


# --- several streams -----------------------------------------------------------------


def test_claim_with_multiple_streams(s):
    for key, first in (("s1", 1), ("s2", 3), ("s3", 5)):
        x(s, "XADD", key, f"{first}-0", "f", "v1")
        x(s, "XADD", key, f"{first + 1}-0", "f", "v2")
        x(s, "XGROUP", "CREATE", key, "g", "0")
    x(s, "XREADGROUP", "GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s1", "s2", "s3", ">", ">", ">")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c1", 50, "s1", "s2", "s3", ">", ">", ">")
    assert reply == [
        [b"s1", [[b"1-0", [b"f", b"v1"], 100, 1], [b"2-0", [b"f", b"v2"], 0, 0]]],
        [b"s2", [[b"3-0", [b"f", b"v1"], 100, 1], [b"4-0", [b"f", b"v2"], 0, 0]]],
        [b"s3", [[b"5-0", [b"f", b"v1"], 100, 1], [b"6-0", [b"f", b"v2"], 0, 0]]],
    ]


def test_claim_streams_with_nothing_to_serve_are_left_out(s):
    for key in ("s1", "s2", "s3"):
        x(s, "XADD", key, "1-0", "f", key)
        x(s, "XGROUP", "CREATE", key, "g", "0")
    x(s, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s1", "s2", "s3", ">", ">", ">")
    s.advance_clock_ms(50)
    x(s, "XREADGROUP", "GROUP", "g", "c1", "CLAIM", 0, "STREAMS", "s2", ">")  # s2 redelivered
    s.advance_clock_ms(50)
    reply = claim_read(s, "c2", 100, "s1", "s2", "s3", ">", ">", ">")
    assert reply == [
        [b"s1", [[b"1-0", [b"f", b"s1"], 100, 1]]],
        [b"s3", [[b"1-0", [b"f", b"s3"], 100, 1]]],
    ]


def test_claim_is_off_after_a_stream_read_from_history(s):
    # s1 ">" claims, s2 "0" serves the consumer's history, and from then on CLAIM no
    # longer applies: s3 ">" gets only new entries, in the two-element form.
    for key in ("s1", "s2", "s3"):
        x(s, "XADD", key, "1-0", "f", key)
        x(s, "XGROUP", "CREATE", key, "g", "0")
    x(s, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s1", "s2", "s3", ">", ">", ">")
    for key in ("s1", "s2", "s3"):
        x(s, "XADD", key, "2-0", "f", key + "new")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c1", 50, "s1", "s2", "s3", ">", "0", ">")
    assert reply == [
        [b"s1", [[b"1-0", [b"f", b"s1"], 100, 1], [b"2-0", [b"f", b"s1new"], 0, 0]]],
        [b"s2", [[b"1-0", [b"f", b"s2"]]]],
        [b"s3", [[b"2-0", [b"f", b"s3new"]]]],
    ]
    # s3's pending 1-0 was not claimed: still delivered once, 100 ms ago.
    assert pending(s, "s3", "g") == [[b"1-0", b"c1", 100, 1], [b"2-0", b"c1", 0, 1]]


def test_claim_is_off_when_first_stream_is_read_from_history(s):
    for key in ("s1", "s2"):
        x(s, "XADD", key, "1-0", "f", key)
        x(s, "XGROUP", "CREATE", key, "g", "0")
    x(s, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s1", "s2", ">", ">")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s1", "s2", "0", ">")
    # c2 has no history in s1 (empty list is still reported); s2 has nothing new and
    # CLAIM is off, so it is left out.
    assert reply == [[b"s1", []]]
    assert pending(s, "s2", "g") == [[b"1-0", b"c1", 100, 1]]


def test_claim_with_block_and_multiple_streams_mixed(s):
    x(s, "XADD", "s1", "1-0", "f", "v1")
    x(s, "XADD", "s2", "2-0", "f", "v2")
    x(s, "XGROUP", "CREATE", "s1", "g", "0")
    x(s, "XGROUP", "CREATE", "s2", "g", "0")
    x(s, "XREADGROUP", "GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s1", ">")
    s.advance_clock_ms(100)
    reply = x(
        s,
        "XREADGROUP",
        "GROUP",
        "g",
        "c2",
        "BLOCK",
        1000,
        "CLAIM",
        50,
        "STREAMS",
        "s1",
        "s2",
        ">",
        ">",
    )
    assert reply == [
        [b"s1", [[b"1-0", [b"f", b"v1"], 100, 1]]],
        [b"s2", [[b"2-0", [b"f", b"v2"], 0, 0]]],
    ]
