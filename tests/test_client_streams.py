"""Stream commands: the xstreams client returns what redis-py returns, call by call.

Every test runs the same steps through redis-py on a real redis-server and through
``xstreams.client.Redis`` on the ``backend`` fixture, under each client configuration
of ``client_kwargs`` (decode_responses, protocol, legacy_responses), and compares
values, types and errors.
"""

from __future__ import annotations

import threading

import pytest
from client_support.compare import compare

pytest_plugins = ("client_support.fixtures",)

CONFIGS = {
    "default": {},
    "decode": {"decode_responses": True},
    "resp2": {"protocol": 2},
    "resp2-decode": {"protocol": 2, "decode_responses": True},
    "resp3": {"protocol": 3},
    "resp3-decode": {"protocol": 3, "decode_responses": True},
    "unified": {"legacy_responses": False},
    "resp2-unified-decode": {"protocol": 2, "legacy_responses": False, "decode_responses": True},
    "resp3-unified": {"protocol": 3, "legacy_responses": False},
}


@pytest.fixture(params=list(CONFIGS.values()), ids=list(CONFIGS))
def client_kwargs(request):
    return request.param


@pytest.fixture
def check(ref_factory, xs_factory, client_kwargs):
    def run(steps, setup=(), **kwargs):
        return compare(ref_factory, xs_factory, steps, setup=setup, **client_kwargs, **kwargs)

    return run


# Entries 1-1, 1-2, 2-0, 3-0, 4-0, 5-0 in stream "s".
STREAM = [
    ("xadd", ("s", {"a": 1, "b": b"x"}), {"id": "1-1"}),
    ("xadd", ("s", {"f": 1.5}), {"id": "1-2"}),
    ("xadd", ("s", {"f": memoryview(b"mv"), "g": bytearray(b"ba")}), {"id": "2"}),
    ("xadd", ("s", {b"bin\x00": b"\xff\xfe"}), {"id": 3}),
    ("xadd", ("s", {"a": 1}), {"id": "4-*"}),
    ("xadd", ("s", {"ü": "é"}), {"id": "5-0"}),
]


def test_xadd(check):
    check(
        [
            ("xadd", ("missing", {"a": 1}), {"nomkstream": True}),
            ("exists", ("missing",)),
            ("xadd", ("s", {"a": 1}), {"id": "10-0", "maxlen": 2, "approximate": False}),
            ("xlen", ("s",)),
            ("xadd", ("s", {"a": 1}), {"id": "11-0", "maxlen": 1}),
            ("xadd", ("s", {"a": 1}), {"id": "12-0", "minid": "11-0", "approximate": False}),
            ("xadd", ("s", {"a": 1}), {"id": "13-0", "minid": 12, "approximate": True}),
            ("xadd", ("s", {"a": 1}), {"id": "14-0", "maxlen": 1, "limit": 10}),
            (
                "xadd",
                ("s", {"a": 1}),
                {"id": "15-0", "maxlen": 1, "approximate": False, "limit": 5},
            ),
            ("xadd", ("s", {"a": 1}), {"id": "16-0", "ref_policy": "DELREF", "maxlen": 5}),
            ("xadd", ("s", {"a": 1}), {"id": "17-0", "ref_policy": "ACKED"}),
            ("xadd", ("s", {"a": 1}), {"id": "18-0", "ref_policy": "KEEPREF", "nomkstream": True}),
            ("xrange", ("s",)),
            ("xadd", ("s", {"a": 1})),
            ("set", ("str", "v")),
            ("xadd", ("str", {"a": 1})),
            # client-side validation
            ("xadd", ("s", {"a": True})),
            ("xadd", ("s", {"a": None})),
            ("xadd", ("s", {"a": [1]})),
            ("xadd", ("s", {"a": 1}), {"maxlen": -1}),
            ("xadd", ("s", {"a": 1}), {"maxlen": 1.5}),
            ("xadd", ("s", {})),
            ("xadd", ("s", [("a", 1)])),
            ("xadd", ("s", {"a": 1}), {"maxlen": 1, "minid": "1"}),
            ("xadd", ("s", {"a": 1}), {"idmpauto": "p", "idmp": ("p", b"i")}),
            ("xadd", ("s", {"a": 1}), {"id": "5-0", "idmpauto": "p"}),
            ("xadd", ("s", {"a": 1}), {"id": "5-0", "idmp": ("p", "i")}),
            ("xadd", ("s", {"a": 1}), {"ref_policy": "BAD"}),
            ("xadd", ("s", {"a": 1}), {"idmp": ["p", "i"]}),
            ("xadd", ("s", {"a": 1}), {"idmp": ("p",)}),
        ],
        setup=STREAM[:1],
    )


def test_xadd_ids_and_values(check):
    check(
        STREAM
        + [
            ("xadd", ("s", {"a": 1}), {"id": "3-0"}),
            ("xadd", ("s", {"a": 1}), {"id": "0-0"}),
            ("xadd", ("s", {"a": 1}), {"id": "bad"}),
            ("xadd", ("s", {"a": 1}), {"id": "5-*"}),
            ("xadd", ("s", {"a": 1}), {"id": "18446744073709551615-18446744073709551615"}),
            ("xadd", ("s", {"a": 1}), {"id": "18446744073709551615-*"}),
            ("xadd", ("s", {"a": 1})),
            ("xrange", ("s",)),
            ("xlen", ("s",)),
        ]
    )


def test_xlen_xrange_xrevrange(check):
    check(
        [
            ("xlen", ("s",)),
            ("xlen", ("missing",)),
            ("xrange", ("s",)),
            ("xrange", ("s", "1-2", "3")),
            ("xrange", ("s", "(1-1", "+"), {"count": 2}),
            ("xrange", ("s",), {"count": 1}),
            ("xrange", ("s", 2, 3)),
            ("xrange", ("missing",)),
            ("xrange", ("s", "x", "+")),
            ("xrange", ("s",), {"count": 0}),
            ("xrange", ("s",), {"count": "2"}),
            ("xrevrange", ("s",)),
            ("xrevrange", ("s", "3", "(1-1")),
            ("xrevrange", ("s",), {"count": 2}),
            ("xrevrange", ("missing",)),
            ("xrevrange", ("s",), {"count": -1}),
            ("set", ("str", "v")),
            ("xlen", ("str",)),
            ("xrange", ("str",)),
            ("xrevrange", ("str",)),
        ],
        setup=STREAM,
    )


def test_xdel_xdelex_xtrim(check):
    check(
        [
            ("xdel", ("s", "1-1")),
            ("xdel", ("s", "1-1", "1-2", "99-0")),
            ("xdel", ("missing", "1-1")),
            ("xdel", ("s", "bad")),
            ("xdelex", ("s", "2-0", "99-0")),
            ("xdelex", ("s", "3-0"), {"ref_policy": "DELREF"}),
            ("xdelex", ("s", "4-0"), {"ref_policy": "ACKED"}),
            ("xdelex", ("s",)),
            ("xdelex", ("s", "4-0"), {"ref_policy": "NOPE"}),
            ("xinfo_stream", ("s",)),
            ("xtrim", ("s",), {"maxlen": 5, "approximate": False}),
            ("xtrim", ("s",), {"maxlen": 0}),
            ("xtrim", ("s",), {"maxlen": 1, "approximate": False}),
            ("xtrim", ("missing",), {"maxlen": 1}),
            ("xtrim", ("s",), {"minid": "9", "approximate": False}),
            ("xtrim", ("s",), {"minid": "9", "limit": 10}),
            ("xtrim", ("s",), {"maxlen": 0, "approximate": False, "limit": 10}),
            ("xtrim", ("s",), {"maxlen": 0, "ref_policy": "DELREF"}),
            ("xtrim", ("s",), {"maxlen": 0, "approximate": False, "ref_policy": "ACKED"}),
            ("xtrim", ("s",)),
            ("xtrim", ("s",), {"maxlen": 1, "minid": "1"}),
            ("xtrim", ("s",), {"maxlen": 1, "ref_policy": "X"}),
            ("xtrim", ("s",), {"maxlen": -1}),
            ("xtrim", ("s",), {"maxlen": "abc"}),
            ("xlen", ("s",)),
        ],
        setup=STREAM
        + [("xadd", ("s", {"k": i}), {"id": f"{10 + i}-0"}) for i in range(10)]
        + [("xgroup_create", ("s", "g", "0"))],
    )


def _blocking_xread(r):
    timer = threading.Timer(0.2, lambda: r.xadd("s", {"w": 1}, id="100-0"))
    timer.start()
    try:
        return r.xread({"s": "$"}, block=10000)
    finally:
        timer.join()


def _blocking_xreadgroup(r):
    timer = threading.Timer(0.2, lambda: r.xadd("s", {"w": 2}, id="101-0"))
    timer.start()
    try:
        return r.xreadgroup("g", "c9", {"s": ">"}, block=10000)
    finally:
        timer.join()


def test_xread(check):
    check(
        [
            ("xread", ({"s": "0"},)),
            ("xread", ({"s": 0, "t": "0-0"},), {"count": 1}),
            ("xread", ({"s": "2-0", "missing": "0"},)),
            ("xread", ({"missing": "0"},)),
            ("xread", ({"s": "$"},), {"block": 10}),
            ("xread", ({"s": "+"},)),
            ("xread", ({"s": "bad"},)),
            ("xread", ({},)),
            ("xread", ([("s", "0")],)),
            ("xread", ({"s": "0"},), {"count": 0}),
            ("xread", ({"s": "0"},), {"block": -1}),
            ("xread", ({"s": "0"},), {"block": 1.5}),
            ("xread", ({"s": "0"},), {"max_count": 0}),
            ("xread", ({"s": "0"},), {"count": 5, "max_count": 2}),
            ("xread", ({"s": "0"},), {"max_size": 0}),
            ("set", ("str", "v")),
            ("xread", ({"str": "0"},)),
            _blocking_xread,
        ],
        setup=STREAM + [("xadd", ("t", {"x": "y"}), {"id": "7-7"})],
    )


def test_xreadgroup(check):
    check(
        [
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"count": 2}),
            ("xreadgroup", ("g", "c2", {"s": ">", "t": ">"}), {"count": 1}),
            ("xreadgroup", ("g", "c1", {"s": "0"})),
            ("xreadgroup", ("g", "c1", {"s": "0"}), {"count": 1}),
            ("xreadgroup", ("g", "c3", {"s": ">"}), {"noack": True}),
            ("xreadgroup", ("g", "c3", {"s": "0"})),
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"block": 10}),
            ("xreadgroup", ("g", "c1", {"t": ">"}), {"block": 10, "noack": True}),
            ("xreadgroup", ("nogroup", "c1", {"s": ">"})),
            ("xreadgroup", ("g", "c1", {"missing": ">"})),
            ("xreadgroup", ("g", "c1", {"s": "bad"})),
            ("xreadgroup", ("g", "c1", {})),
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"count": 0}),
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"block": -5}),
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"claim_min_idle_time": -1}),
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"max_count": "1"}),
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"count": 3, "max_count": 2}),
            ("xreadgroup", ("g", "c1", {"s": ">"}), {"max_size": -1}),
            ("xpending", ("s", "g")),
            _blocking_xreadgroup,
        ],
        setup=STREAM
        + [
            ("xadd", ("t", {"x": "y"}), {"id": "7-7"}),
            ("xgroup_create", ("s", "g", "0")),
            ("xgroup_create", ("t", "g", "0")),
        ],
    )


def test_xgroup(check):
    check(
        [
            ("xgroup_create", ("missing", "g")),
            ("xgroup_create", ("new", "g"), {"mkstream": True}),
            ("xgroup_create", ("new", "g"), {"mkstream": True}),
            ("xgroup_create", ("s", "g1")),
            ("xgroup_create", ("s", "g2", "0"), {"entries_read": 2}),
            ("xgroup_create", ("s", "g3", "1-2")),
            ("xgroup_create", ("s", "g4", "bad")),
            ("xgroup_create", ("s", "g5", "$"), {"entries_read": "x"}),
            ("xinfo_groups", ("s",)),
            ("xgroup_setid", ("s", "g1", "0")),
            ("xgroup_setid", ("s", "g1", "1-2"), {"entries_read": 1}),
            ("xgroup_setid", ("s", "nope", "0")),
            ("xgroup_setid", ("missing", "g1", "0")),
            ("xinfo_groups", ("s",)),
            ("xgroup_createconsumer", ("s", "g1", "c1")),
            ("xgroup_createconsumer", ("s", "g1", "c1")),
            ("xgroup_createconsumer", ("s", "nope", "c1")),
            ("xreadgroup", ("g1", "c2", {"s": ">"})),
            ("xgroup_delconsumer", ("s", "g1", "c2")),
            ("xgroup_delconsumer", ("s", "g1", "c2")),
            ("xgroup_delconsumer", ("s", "nope", "c2")),
            ("xinfo_consumers", ("s", "g1")),
            ("xgroup_destroy", ("s", "g1")),
            ("xgroup_destroy", ("s", "g1")),
            ("xgroup_destroy", ("missing", "g1")),
            ("set", ("str", "v")),
            ("xgroup_create", ("str", "g")),
            ("xinfo_groups", ("s",)),
        ],
        setup=STREAM,
    )


GROUP_SETUP = STREAM + [
    ("xgroup_create", ("s", "g", "0")),
    ("xreadgroup", ("g", "alice", {"s": ">"}), {"count": 3}),
    ("xreadgroup", ("g", "bob", {"s": ">"}), {"count": 2}),
    ("xgroup_createconsumer", ("s", "g", "carol")),
]


def test_xack_xackdel(check):
    check(
        [
            ("xack", ("s", "g", "1-1")),
            ("xack", ("s", "g", "1-1", "1-2", "99-0")),
            ("xack", ("s", "nope", "1-1")),
            ("xack", ("missing", "g", "1-1")),
            ("xack", ("s", "g", "bad")),
            ("xackdel", ("s", "g", "2-0", "99-0")),
            ("xackdel", ("s", "g", "3-0"), {"ref_policy": "DELREF"}),
            ("xackdel", ("s", "g", "4-0"), {"ref_policy": "ACKED"}),
            ("xackdel", ("s", "g")),
            ("xackdel", ("s", "g", "1-1"), {"ref_policy": "x"}),
            ("xpending", ("s", "g")),
            ("xlen", ("s",)),
        ],
        setup=GROUP_SETUP,
    )


def test_xack_checks_in_redis_order(check):
    # The typed XACK: the key's type, 0 without the key or the group (whatever the IDs),
    # then every ID strictly (one bad ID fails the call and acknowledges nothing).
    check(
        [
            ("xack", ("missing", "g", "bad")),
            ("xack", ("s", "nope", "bad", "1-1")),
            ("xack", ("s", "g", "1-1", "bad")),
            ("xack", ("s", "g", "1-1", "1-x")),
            ("xpending", ("s", "g")),
            ("xack", ("s", "g")),
            ("set", ("str", "v")),
            ("xack", ("str", "g", "1-1")),
            ("xack", ("s", "g", 1, b"1-2", "2-0", "1-2", "+", "-")),
            ("xack", ("s", "g", True)),
            ("xack", ("s", "g", "3-0", "4")),
            ("xpending", ("s", "g")),
        ],
        setup=GROUP_SETUP,
    )


def test_xackdel_checks_in_redis_order(check):
    # The typed XACKDEL: the key's type, every ID not found without the key or the group
    # (the IDs not even parsed), then every ID strictly (one bad ID deletes nothing).
    check(
        [
            ("xackdel", ("missing", "g", "bad")),
            ("xackdel", ("s", "nope", "bad", "1-1")),
            ("xackdel", ("s", "g", "1-1", "bad")),
            ("xpending", ("s", "g")),
            ("set", ("str", "v")),
            ("xackdel", ("str", "g", "1-1")),
            ("xackdel", ("s", "g", 1, b"1-2", "2-0", "1-2"), {"ref_policy": "DELREF"}),
            ("xackdel", ("s", "g", "3-0", "9-9"), {"ref_policy": "ACKED"}),
            ("xpending", ("s", "g")),
            ("xlen", ("s",)),
        ],
        setup=GROUP_SETUP,
    )


def test_xpending(check):
    check(
        [
            ("xpending", ("s", "g")),
            ("xpending", ("s", "empty")),
            ("xpending", ("s", "nope")),
            ("xpending", ("missing", "g")),
            ("xpending_range", ("s", "g", "-", "+", 10)),
            ("xpending_range", ("s", "g", "-", "+", 2)),
            ("xpending_range", ("s", "g", "(1-1", "3-0", 10)),
            ("xpending_range", ("s", "g", "-", "+", 10), {"consumername": "bob"}),
            ("xpending_range", ("s", "g", "-", "+", 10), {"consumername": "nobody"}),
            ("xpending_range", ("s", "g", "-", "+", 10), {"idle": 0}),
            ("xpending_range", ("s", "g", "-", "+", 10), {"idle": 10**9}),
            ("xpending_range", ("s", "g", "-", "+", 0)),
            ("xpending_range", ("s", "empty", "-", "+", 10)),
            ("xpending_range", ("s", "g", None, None, None)),
            ("xpending_range", ("s", "g", None, None, None), {"idle": 5}),
            ("xpending_range", ("s", "g", None, None, None), {"consumername": "bob"}),
            ("xpending_range", ("s", "g", "-", None, 5)),
            ("xpending_range", ("s", "g", "-", "+", -1)),
            ("xpending_range", ("s", "g", "-", "+", 5), {"idle": -1}),
            ("xpending_range", ("s", "g", "-", "+", "x")),
            ("xpending_range", ("s", "g", "bad", "+", 5)),
        ],
        setup=GROUP_SETUP + [("xgroup_create", ("s", "empty", "$"))],
    )


def test_xclaim(check):
    check(
        [
            ("xclaim", ("s", "g", "carol", 0, ["1-1"])),
            ("xclaim", ("s", "g", "carol", 0, ("1-2", "2-0")), {"justid": True}),
            ("xclaim", ("s", "g", "dave", 10**9, ["3-0"])),
            ("xclaim", ("s", "g", "dave", 0, ["3-0"]), {"idle": 5000, "retrycount": 7}),
            ("xclaim", ("s", "g", "dave", 0, ["4-0"]), {"time": 1_600_000_000_000}),
            ("xclaim", ("s", "g", "dave", 0, ["5-0"]), {"force": True}),
            ("xclaim", ("s", "g", "dave", 0, ["99-0"]), {"force": True}),
            ("xpending_range", ("s", "g", "-", "+", 10)),
            ("xclaim", ("s", "g", "carol", 0, ["1-1"]), {"justid": True, "force": True}),
            ("xclaim", ("s", "nope", "carol", 0, ["1-1"])),
            ("xclaim", ("missing", "g", "carol", 0, ["1-1"])),
            ("xclaim", ("s", "g", "carol", 0, ["bad"])),
            ("xclaim", ("s", "g", "carol", -1, ["1-1"])),
            ("xclaim", ("s", "g", "carol", "0", ["1-1"])),
            ("xclaim", ("s", "g", "carol", 0, [])),
            ("xclaim", ("s", "g", "carol", 0, "1-1")),
            ("xclaim", ("s", "g", "carol", 0, ["1-1"]), {"idle": "5"}),
            ("xclaim", ("s", "g", "carol", 0, ["1-1"]), {"time": 1.5}),
            ("xclaim", ("s", "g", "carol", 0, ["1-1"]), {"retrycount": "1"}),
            ("xclaim", ("s", "g", "carol", 0, ["1-1"]), {"force": 1}),
            ("xclaim", ("s", "g", "carol", 0, ["1-1"]), {"justid": "yes"}),
            ("xinfo_consumers", ("s", "g")),
        ],
        setup=GROUP_SETUP,
    )


def test_xautoclaim(check):
    check(
        [
            ("xautoclaim", ("s", "g", "carol", 10**9)),
            ("xautoclaim", ("s", "g", "carol", 0), {"count": 2}),
            ("xautoclaim", ("s", "g", "carol", 0, "(1-2"), {"count": 1, "justid": True}),
            ("xautoclaim", ("s", "g", "dave", 0, "0-0")),
            ("xdel", ("s", "3-0")),
            ("xautoclaim", ("s", "g", "erin", 0)),
            ("xautoclaim", ("s", "g", "erin", 0), {"justid": True}),
            ("xautoclaim", ("s", "nope", "carol", 0)),
            ("xautoclaim", ("missing", "g", "carol", 0)),
            ("xautoclaim", ("s", "g", "carol", -1)),
            ("xautoclaim", ("s", "g", "carol", "abc")),
            ("xautoclaim", ("s", "g", "carol", None)),
            ("xautoclaim", ("s", "g", "carol", 0), {"count": -1}),
            ("xautoclaim", ("s", "g", "carol", 0), {"count": 0}),
            ("xautoclaim", ("s", "g", "carol", 0, "bad")),
        ],
        setup=GROUP_SETUP,
    )


def test_xinfo(check):
    check(
        [
            ("xinfo_stream", ("s",)),
            ("xinfo_stream", ("s",), {"full": True}),
            ("xinfo_stream", ("empty",)),
            ("xinfo_stream", ("empty",), {"full": True}),
            ("xinfo_stream", ("missing",)),
            ("xinfo_groups", ("s",)),
            ("xinfo_groups", ("empty",)),
            ("xinfo_groups", ("missing",)),
            ("xinfo_consumers", ("s", "g")),
            ("xinfo_consumers", ("s", "g2")),
            ("xinfo_consumers", ("s", "nope")),
            ("xinfo_consumers", ("missing", "g")),
            ("set", ("str", "v")),
            ("xinfo_stream", ("str",)),
        ],
        setup=GROUP_SETUP
        + [
            ("xgroup_create", ("s", "g2", "$")),
            ("xgroup_create", ("empty", "g", "$"), {"mkstream": True}),
        ],
    )


def test_execute_command_forms(check):
    check(
        [
            ("execute_command", ("XINFO STREAM", "s")),
            ("execute_command", ("XINFO", "STREAM", "s")),
            ("execute_command", ("xinfo stream", "s", "FULL"), {"full": True}),
            ("execute_command", ("XINFO GROUPS", "s")),
            ("execute_command", ("xrange", "s", "-", "+")),
            ("execute_command", (b"XRANGE", "s", "-", "+")),
            ("execute_command", (b"XINFO GROUPS", "s")),
            ("execute_command", ("XREAD", "STREAMS", "s", "0")),
            ("execute_command", ("XREAD", "COUNT", 1, "STREAMS", "s", "0")),
            ("execute_command", ("XREADGROUP", "GROUP", "g", "zed", "STREAMS", "s", ">")),
            ("execute_command", ("XPENDING", "s", "g")),
            ("execute_command", ("XPENDING", "s", "g", "-", "+", 10), {"parse_detail": True}),
            ("execute_command", ("XCLAIM", "s", "g", "x", 0, "1-1")),
            ("execute_command", ("XAUTOCLAIM", "s", "g", "x", 0, "0")),
            ("execute_command", ("XGROUP", "CREATE", "s", "g9", "$")),
            ("execute_command", ("XGROUP CREATE", "s", "g8", "$")),
            ("execute_command", ("XGROUP DESTROY", "s", "g8")),
            ("execute_command", ("XSETID", "s", "100-0")),
            ("execute_command", ("XSETID", "s", "1-0")),
            ("execute_command", ("XSETID", "s", "200-0", "ENTRIESADDED", 50, "MAXDELETEDID", "3")),
            ("execute_command", ("XINFO", "STREAM", "s")),
            ("execute_command", ("NOSUCHCOMMAND", "x")),
            ("execute_command", ("XADD", "s")),
            ("execute_command", ("XGROUP", "NOPE")),
            ("execute_command", ("XLEN", "s"), {"keys": ["s"]}),
            ("execute_command", ("GET", "nokey")),
            ("execute_command", ("TYPE", "s")),
            ("execute_command", ("XTRIM", "s", "MAXLEN", "=", 2)),
            ("execute_command", ("XINFO", "HELP")),
        ],
        setup=GROUP_SETUP,
    )
