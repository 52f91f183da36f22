"""XREADGROUP ... CLAIM with BLOCK: woken by new entries, by XNACK and when the clock
makes an entry claimable, served in blocking order, re-blocked when the claimable entry
was acknowledged; never blocking inside an atomic batch; and the volume checks. The
family's overview is in test_redis_claim.py."""

from __future__ import annotations

import time

import pytest
import xstreams
from support_claim import claim_read, setup_read, x
from support_streams import (
    NOW,
    Blocked,
    add_entries,
    new_store,
    pending,
    pending_count,
    read_all,
)

# --- BLOCK ---------------------------------------------------------------------------


def test_claim_with_block(s):
    setup_read(s, 3)
    assert x(s, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", 1, "STREAMS", "s", ">") is None
    assert (
        x(s, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", 100, "CLAIM", 500, "STREAMS", "s", ">")
        is None
    )
    s.advance_clock_ms(100)
    reply = x(s, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", 10000, "CLAIM", 50, "STREAMS", "s", ">")
    assert [(e[0], e[2], e[3]) for e in reply[0][1]] == [
        (b"1-0", 100, 1),
        (b"2-0", 100, 1),
        (b"3-0", 100, 1),
    ]
    s.advance_clock_ms(100)
    reply = x(s, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", 0, "CLAIM", 50, "STREAMS", "s", ">")
    assert [(e[0], e[2], e[3]) for e in reply[0][1]] == [
        (b"1-0", 100, 2),
        (b"2-0", 100, 2),
        (b"3-0", 100, 2),
    ]


def test_claim_block_times_out_with_no_claimable_messages(s):
    setup_read(s, 1)
    start = time.monotonic()
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 100, "CLAIM", 500, "STREAMS", "s", ">")
    elapsed = time.monotonic() - start
    assert reply is None
    assert 0.09 <= elapsed < 1.0


def test_claim_claims_all_pending_immediately(s):
    setup_read(s, 1)
    start = time.monotonic()
    reply = x(s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 1000, "CLAIM", 0, "STREAMS", "s", ">")
    assert time.monotonic() - start < 0.5
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 0, 1]]]]


def test_claim_with_block_and_noack(s):
    setup_read(s, 1)
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
        "NOACK",
        "STREAMS",
        "s",
        ">",
    )
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1]]]]
    assert pending(s, "s", "g") == [[b"1-0", b"c2", 0, 2]]


def test_claim_with_two_blocked_clients(s):
    x(s, "XADD", "s", "1-0", "f", "v1")
    x(s, "XDEL", "s", "1-0")
    x(s, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    readers = {
        name: Blocked(
            s, "XREADGROUP", "GROUP", "g", name, "BLOCK", 0, "CLAIM", 100, "STREAMS", "s", ">"
        )
        for name in ("c1", "c2")
    }
    x(s, "XADD", "s", "2-0", "f", "v2")
    time.sleep(0.2)
    # One reader gets the new entry; the other stays blocked until that entry becomes
    # claimable (which order they are served in is checked by the FIFO test below).
    served = [name for name, r in readers.items() if not r.blocked]
    assert len(served) == 1
    first = served[0]
    second = "c2" if first == "c1" else "c1"
    assert readers[first].wait() == [[b"s", [[b"2-0", [b"f", b"v2"], 0, 0]]]]
    s.advance_clock_ms(150)
    assert readers[second].wait() == [[b"s", [[b"2-0", [b"f", b"v2"], 150, 1]]]]
    assert pending(s, "s", "g") == [[b"2-0", second.encode(), 0, 2]]


def test_claim_blocked_readers_are_served_in_blocking_order():
    # blocked.c handleClientsBlockedOnKey: "We serve clients in the same order they
    # blocked for this key".  Several rounds, so that a random order cannot pass.
    for _ in range(4):
        s = new_store()
        x(s, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
        first = Blocked(
            s, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", 0, "CLAIM", 100, "STREAMS", "s", ">"
        )
        second = Blocked(
            s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 0, "CLAIM", 100, "STREAMS", "s", ">"
        )
        x(s, "XADD", "s", "1-0", "f", "v")
        assert first.wait(2) == [[b"s", [[b"1-0", [b"f", b"v"], 0, 0]]]]
        assert second.blocked
        x(s, "XADD", "s", "2-0", "f", "v")
        assert second.wait(2) == [[b"s", [[b"2-0", [b"f", b"v"], 0, 0]]]]
        s.validate()


def test_claim_messages_become_claimable_during_block(s):
    setup_read(s, 1)
    reader = Blocked(
        s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 5000, "CLAIM", 1000, "STREAMS", "s", ">"
    )
    s.advance_clock_ms(500)
    time.sleep(0.1)
    assert reader.blocked
    s.advance_clock_ms(1000)
    assert reader.wait() == [[b"s", [[b"1-0", [b"f", b"v1"], 1500, 1]]]]


def test_claim_block_wakes_on_new_message_before_min_idle_time(s):
    setup_read(s, 1)
    reader = Blocked(
        s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 5000, "CLAIM", 1000, "STREAMS", "s", ">"
    )
    s.advance_clock_ms(100)
    x(s, "XADD", "s", "2-0", "f", "v2")
    assert reader.wait() == [[b"s", [[b"2-0", [b"f", b"v2"], 0, 0]]]]
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 100, 1], [b"2-0", b"c2", 0, 1]]


def test_claim_block_wakes_on_xnack(s):
    setup_read(s, 2)
    reader = Blocked(
        s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 5000, "CLAIM", 1000, "STREAMS", "s", ">"
    )
    assert reader.blocked
    assert x(s, "XNACK", "s", "g", "FAIL", "IDS", 2, "1-0", "2-0") == 2
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


# --- volume and atomic batches -------------------------------------------------------


def test_claim_usage_stability_with_repeated_claims(s):
    setup_read(s, 1)
    for i in range(1000):
        s.advance_clock_ms(2)
        reply = claim_read(s, f"c{i % 10 + 1}", 1, "s", ">")
        assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 2, i + 1]]]]
    assert pending_count(s, "s", "g") == 1
    assert pending(s, "s", "g") == [[b"1-0", b"c10", 0, 1001]]


def test_claim_with_large_number_of_pel_messages(s):
    x(s, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    for i in range(10000):
        x(s, "XADD", "s", "*", "field", i)
    read_all(s, "s", "g", "c1")
    s.advance_clock_ms(100)
    reply = claim_read(s, "c2", 50, "s", ">", extra=("COUNT", 1000))
    assert len(reply[0][1]) == 1000
    assert reply[0][1][0] == [f"{NOW}-0".encode(), [b"field", b"0"], 100, 1]
    assert reply[0][1][-1] == [f"{NOW}-999".encode(), [b"field", b"999"], 100, 1]
    assert x(s, "XPENDING", "s", "g")[3] == [[b"c1", b"9000"], [b"c2", b"1000"]]


def test_claim_within_an_atomic_batch(s):
    setup_read(s, 1)
    s.advance_clock_ms(100)
    results = s.execute_many(
        [
            ["XREADGROUP", "GROUP", "g", "c2", "CLAIM", 50, "STREAMS", "s", ">"],
            ["XPENDING", "s", "g"],
        ]
    )
    assert results == [
        [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1]]]],
        [1, b"1-0", b"1-0", [[b"c2", b"1"]]],
    ]


def test_claim_error_types_are_response_errors(s):
    setup_read(s, 1)
    with pytest.raises(xstreams.ResponseError) as info:
        claim_read(s, "c1", -1, "s", ">")
    assert info.value.code == "ERR"
    assert str(info.value) == "min-idle-time must be a positive integer"


def test_claim_block_wakes_only_for_the_stream_that_became_claimable(s):
    for key in ("s1", "s2"):
        x(s, "XADD", key, "1-0", "f", key)
        x(s, "XGROUP", "CREATE", key, "g", "0")
    read_all(s, "s1", "g", "c1")
    s.advance_clock_ms(500)
    read_all(s, "s2", "g", "c1")
    reader = Blocked(
        s,
        "XREADGROUP",
        "GROUP",
        "g",
        "c2",
        "BLOCK",
        5000,
        "CLAIM",
        1000,
        "STREAMS",
        "s1",
        "s2",
        ">",
        ">",
    )
    s.advance_clock_ms(499)
    assert reader.blocked
    s.advance_clock_ms(1)
    assert reader.wait() == [[b"s1", [[b"1-0", [b"f", b"s1"], 1000, 1]]]]
    assert pending(s, "s2", "g") == [[b"1-0", b"c1", 500, 1]]


def test_claim_block_reblocks_when_the_claimable_entry_was_acked(s):
    setup_read(s, 1)
    reader = Blocked(
        s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 700, "CLAIM", 100, "STREAMS", "s", ">"
    )
    assert x(s, "XACK", "s", "g", "1-0") == 1
    s.advance_clock_ms(200)
    assert reader.wait() is None
    assert reader.elapsed >= 0.65
    assert pending_count(s, "s", "g") == 0


def test_claim_block_wakes_on_force_nacked_entry(s):
    add_entries(s, "s", 2)
    x(s, "XGROUP", "CREATE", "s", "g", "$")
    reader = Blocked(
        s, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", 5000, "CLAIM", 1000, "STREAMS", "s", ">"
    )
    assert x(s, "XNACK", "s", "g", "FAIL", "IDS", 1, "1-0", "FORCE") == 1
    assert reader.wait() == [[b"s", [[b"1-0", [b"f", b"v1"], NOW, 0]]]]
    assert pending(s, "s", "g") == [[b"1-0", b"c1", 0, 1]]


def test_plain_blocked_reader_is_not_served_nacked_entries(s):
    setup_read(s, 1)
    reader = Blocked(s, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", 500, "STREAMS", "s", ">")
    assert x(s, "XNACK", "s", "g", "FAIL", "IDS", 1, "1-0") == 1
    assert reader.wait() is None
    assert pending(s, "s", "g") == [[b"1-0", b"", -1, 1]]


def test_claim_block_inside_an_atomic_batch_does_not_block(s):
    # Like MULTI/EXEC: a client that may not block gets the timeout reply at once.
    setup_read(s, 1)
    start = time.monotonic()
    results = s.execute_many(
        [
            ["XREADGROUP", "GROUP", "g", "c2", "BLOCK", 0, "CLAIM", 100, "STREAMS", "s", ">"],
            ["XREADGROUP", "GROUP", "g", "c2", "BLOCK", 0, "CLAIM", 0, "STREAMS", "s", ">"],
        ]
    )
    assert time.monotonic() - start < 0.5
    assert results == [None, [[b"s", [[b"1-0", [b"f", b"v1"], 0, 1]]]]]
