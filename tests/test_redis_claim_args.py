"""XREADGROUP ... CLAIM min-idle-time: its values, its position among the options,
the syntax errors and the XREAD ... CLAIM error (as redis-server's xreadCommand parses
them, in its order). The family's overview is in test_redis_claim.py."""

from __future__ import annotations

import pytest
from support_claim import claim_read, setup_read, x
from support_streams import (
    LLONG_MAX,
    error_of,
)

# --- min-idle-time values ------------------------------------------------------------


def test_claim_with_min_idle_time_zero(s):
    setup_read(s, 2, count=1)
    reply = claim_read(s, "c1", 0, "s", ">")
    assert reply == [
        [
            b"s",
            [
                [b"1-0", [b"f", b"v1"], 0, 1],
                [b"2-0", [b"f", b"v2"], 0, 0],
            ],
        ]
    ]


def test_claim_with_large_min_idle_time(s):
    setup_read(s, 2, count=1)
    s.advance_clock_ms(100)
    reply = claim_read(s, "c1", LLONG_MAX, "s", ">")
    assert reply == [[b"s", [[b"2-0", [b"f", b"v2"], 0, 0]]]]


@pytest.mark.parametrize(
    "value",
    [
        "test",
        "5.5",
        "5,5",
        "10e",
        "+10",
        "*10",
        "10/2",
        "10*2",
        "10€",
        "-0",
        "-5.5",
        "-5,5",
        "-10e",
        "-10/2",
        "-10*2",
        "(-10)*2",
        "",
        "9223372036854775808",
    ],
)
def test_claim_min_idle_time_not_an_integer(s, value):
    setup_read(s, 2, count=1)
    assert (
        error_of(s, "XREADGROUP", "GROUP", "g", "c1", "CLAIM", value, "STREAMS", "s", ">")
        == "ERR min-idle-time is not an integer or out of range"
    )


@pytest.mark.parametrize("value", ["-10", "-42", "-1", "-9223372036854775808"])
def test_claim_min_idle_time_negative(s, value):
    setup_read(s, 2, count=1)
    assert (
        error_of(s, "XREADGROUP", "GROUP", "g", "c1", "CLAIM", value, "STREAMS", "s", ">")
        == "ERR min-idle-time must be a positive integer"
    )


def test_claim_option_position(s):
    setup_read(s, 2, count=1)
    s.advance_clock_ms(100)
    reply = x(s, "XREADGROUP", "GROUP", "g", "c1", "COUNT", 1, "CLAIM", 50, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 1]]]]
    s.advance_clock_ms(100)
    reply = x(s, "XREADGROUP", "GROUP", "g", "c1", "CLAIM", 50, "COUNT", 1, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 100, 2]]]]
    # CLAIM given twice: the last one counts (60 > 59 idle: nothing claimable)...
    s.advance_clock_ms(59)
    reply = x(
        s,
        "XREADGROUP",
        "GROUP",
        "g",
        "c1",
        "CLAIM",
        50,
        "COUNT",
        1,
        "CLAIM",
        60,
        "STREAMS",
        "s",
        ">",
    )
    assert reply == [[b"s", [[b"2-0", [b"f", b"v2"], 0, 0]]]]
    s.advance_clock_ms(100)
    # ... and CLAIM may come before GROUP.
    reply = x(s, "XREADGROUP", "CLAIM", 50, "GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"], 159, 3]]]]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("GROUP", "g", "c1", "CLAIM", 10, "CLAIM", "COUNT", 1, "STREAMS", "s", ">"),
            "ERR min-idle-time is not an integer or out of range",
        ),
        (
            ("CLAIM", "GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", ">"),
            "ERR min-idle-time is not an integer or out of range",
        ),
        (
            ("GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", "CLAIM", 50, ">"),
            "NOGROUP No such key 'CLAIM' or consumer group 'g' in XREADGROUP with GROUP option",
        ),
        (
            ("GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", "CLAIM", ">"),
            "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
            "must be specified.",
        ),
        (
            ("GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", ">", "CLAIM", 50),
            "ERR Invalid stream ID specified as stream command argument",
        ),
        (
            ("GROUP", "g", "c1", "COUNT", 1, "STREAMS", "s", ">", "CLAIM"),
            "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
            "must be specified.",
        ),
        (("GROUP", "g", "CLAIM", 50, "c1", "STREAMS", "s", ">"), "ERR syntax error"),
        (
            ("GROUP", "g", "c1", "CLAIM", "STREAMS", "s", ">"),
            "ERR min-idle-time is not an integer or out of range",
        ),
    ],
)
def test_claim_syntax_errors(s, args, message):
    setup_read(s, 2, count=1)
    assert error_of(s, "XREADGROUP", *args) == message


def test_xread_with_claim_option_is_an_error(s):
    x(s, "XADD", "s", "1-0", "f", "v1")
    assert error_of(s, "XREAD", "COUNT", 2, "CLAIM", 10, "STREAMS", "s", "0-0") == (
        "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead."
    )
    # Checked while parsing, before anything else is looked at.
    assert error_of(s, "XREAD", "CLAIM", "notanumber", "STREAMS", "nokey", "0") == (
        "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead."
    )
