"""Argument building, encoding and response callbacks, checked against redis-py itself.

No server needed: redis-py's ``execute_command`` is replaced by a recorder, so the
commands redis-py would send (including the ones redis-server 8.2 does not know:
XNACK, XCFGSET, XADD IDMP/IDMPAUTO, XREADGROUP CLAIM) are compared with what the
xstreams client builds; and redis-py's response callbacks are run on sample raw replies
next to ours, for every (protocol, legacy_responses) combination.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import xstreams
from xstreams.client import (
    EMPTY_RESPONSE,
    NEVER_DECODE,
    Redis,
    get_response_callbacks,
)
from xstreams.exceptions import DataError, ResponseError, error_from_reply

redis = pytest.importorskip("redis")
pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from redis.connection import Encoder as RedisEncoder  # noqa: E402
from redis.connection import PythonRespSerializer  # noqa: E402


class _Stop(Exception):
    pass


def _capture(client: Any, method: str, args: tuple, kwargs: dict) -> tuple:
    """The execute_command call a method makes, or the exception it raises first."""
    calls = []

    def record(*a, **o):
        calls.append((a, o))
        raise _Stop

    client.execute_command = record
    try:
        getattr(client, method)(*args, **kwargs)
    except _Stop:
        return ("call",) + calls[0]
    except Exception as e:  # noqa: BLE001
        return ("error", type(e).__name__, str(e))
    return ("nothing",)


def _norm(value: Any) -> Any:
    if isinstance(value, memoryview):
        return ("memoryview", bytes(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_norm(v) for v in value])
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return (type(value).__name__, value)


def assert_same_call(method: str, *args: Any, **kwargs: Any) -> tuple:
    ref = _capture(redis.Redis(), method, args, kwargs)
    xs = _capture(Redis(store=object()), method, args, kwargs)
    assert _norm(xs) == _norm(ref), (method, args, kwargs)
    return xs


CALLS = [
    # keyspace
    ("delete", ("a", b"b", 3), {}),
    ("exists", ("a", "b"), {}),
    ("type", ("a",), {}),
    ("keys", (), {}),
    ("keys", ("a*",), {}),
    ("scan", (), {}),
    ("scan", (5,), {"match": "x*", "count": 10, "_type": "stream"}),
    ("dbsize", (), {}),
    ("flushall", (), {}),
    ("flushall", (True,), {}),
    ("flushdb", (), {"asynchronous": True}),
    ("ping", (), {}),
    ("echo", ("x",), {}),
    ("get", ("k",), {}),
    ("set", ("k", "v"), {}),
    ("set", ("k", 1), {"ex": 5, "nx": True, "get": True}),
    ("set", ("k", 1), {"px": datetime.timedelta(milliseconds=1500), "xx": True}),
    ("set", ("k", 1), {"exat": datetime.datetime(2030, 1, 2, 3, 4, 5)}),
    ("set", ("k", 1), {"pxat": datetime.datetime(2030, 1, 2, 3, 4, 5, 678000)}),
    ("set", ("k", 1), {"keepttl": True, "get": True}),
    ("set", ("k", 1), {"ifeq": "old"}),
    ("set", ("k", 1), {"ifne": b"old"}),
    ("set", ("k", 1), {"ifdeq": "abcd"}),
    ("set", ("k", 1), {"ifdne": "abcd", "ex": "12"}),
    ("set", ("k", 1), {"ex": "1x"}),
    ("set", ("k", 1), {"px": "10"}),
    ("set", ("k", 1), {"ex": 1, "pxat": 5}),
    ("set", ("k", 1), {"xx": True, "ifdne": "x"}),
    # streams: commands redis-server 8.2 does not know
    ("xnack", ("s", "g", "SILENT", "1-1"), {}),
    ("xnack", ("s", "g", "FAIL", "1-1", "2-2"), {"retrycount": 3}),
    ("xnack", ("s", "g", "FATAL", "1-1"), {"retrycount": 0, "force": True}),
    ("xnack", ("s", "g", "SILENT"), {}),
    ("xnack", ("s", "g", "LOUD", "1-1"), {}),
    ("xnack", ("s", "g", "FAIL", "1-1"), {"retrycount": -1}),
    ("xcfgset", ("s",), {"idmp_duration": 100}),
    ("xcfgset", ("s",), {"idmp_maxsize": 1000000}),
    ("xcfgset", ("s",), {"idmp_duration": 1, "idmp_maxsize": 1}),
    ("xcfgset", ("s",), {}),
    ("xcfgset", ("s",), {"idmp_duration": 0}),
    ("xcfgset", ("s",), {"idmp_duration": 301}),
    ("xcfgset", ("s",), {"idmp_duration": "5"}),
    ("xcfgset", ("s",), {"idmp_maxsize": 1000001}),
    ("xcfgset", ("s",), {"idmp_maxsize": 0}),
    ("xadd", ("s", {"a": 1}), {"idmpauto": "producer-1"}),
    ("xadd", ("s", {"a": 1}), {"idmp": ("producer-1", b"iid-7")}),
    ("xadd", ("s", {"a": 1}), {"idmp": ("p", "i"), "maxlen": 10, "nomkstream": True}),
    ("xadd", ("s", {"a": 1}), {"idmpauto": "p", "ref_policy": "ACKED", "minid": "5"}),
    ("xadd", ("s", {"a": 1}), {"idmpauto": "p", "id": "1-1"}),
    ("xadd", ("s", {"a": 1}), {"idmp": "p"}),
    ("xreadgroup", ("g", "c", {"s": ">"}), {"claim_min_idle_time": 0}),
    ("xreadgroup", ("g", "c", {"s": ">", "t": "0"}), {"claim_min_idle_time": 5000, "count": 2}),
    ("xreadgroup", ("g", "c", {"s": ">"}), {"claim_min_idle_time": 1, "noack": True, "block": 0}),
    ("xreadgroup", ("g", "c", {"s": ">"}), {"claim_min_idle_time": "1"}),
    ("xreadgroup", ("g", "c", {"s": ">"}), {"max_count": 5, "max_size": 1024, "count": 5}),
    ("xread", ({"s": "0"},), {"max_count": 5, "max_size": 1024}),
    # streams: everything else
    ("xack", ("s", "g", "1-1", b"2-2", 3), {}),
    ("xackdel", ("s", "g", "1-1"), {}),
    ("xackdel", ("s", "g", "1-1", "2-2"), {"ref_policy": "ACKED"}),
    ("xackdel", ("s", "g"), {"ref_policy": "ACKED"}),
    ("xadd", ("s", {"a": 1, b"b": 2.5}), {}),
    ("xadd", ("s", {"a": 1}), {"id": "1-1", "maxlen": 5}),
    ("xadd", ("s", {"a": 1}), {"maxlen": 5, "approximate": False, "limit": 3}),
    ("xadd", ("s", {"a": 1}), {"minid": "1-1", "limit": 3}),
    ("xadd", ("s", {"a": 1}), {"nomkstream": True, "ref_policy": "DELREF"}),
    ("xadd", ("s", {"a": 1}), {"maxlen": True}),
    ("xautoclaim", ("s", "g", "c", 10), {}),
    ("xautoclaim", ("s", "g", "c", "10", "5-0"), {"count": 3, "justid": True}),
    ("xautoclaim", ("s", "g", "c", 10), {"count": "x"}),
    ("xautoclaim", ("s", "g", "c", []), {}),
    ("xclaim", ("s", "g", "c", 5, ["1-1"]), {}),
    ("xclaim", ("s", "g", "c", 5, ("1-1", "2-2")), {"idle": 1, "time": 2, "retrycount": 3}),
    ("xclaim", ("s", "g", "c", 5, ["1-1"]), {"force": True, "justid": True}),
    ("xclaim", ("s", "g", "c", True, ["1-1"]), {}),
    ("xdel", ("s", "1-1", "2-2"), {}),
    ("xdelex", ("s", "1-1"), {}),
    ("xdelex", ("s", "1-1", "2"), {"ref_policy": "DELREF"}),
    ("xgroup_create", ("s", "g"), {}),
    ("xgroup_create", ("s", "g", "0"), {"mkstream": True, "entries_read": 3}),
    ("xgroup_delconsumer", ("s", "g", "c"), {}),
    ("xgroup_destroy", ("s", "g"), {}),
    ("xgroup_createconsumer", ("s", "g", "c"), {}),
    ("xgroup_setid", ("s", "g", "$"), {}),
    ("xgroup_setid", ("s", "g", "0", 7), {}),
    ("xinfo_consumers", ("s", "g"), {}),
    ("xinfo_groups", ("s",), {}),
    ("xinfo_stream", ("s",), {}),
    ("xinfo_stream", ("s",), {"full": True}),
    ("xlen", ("s",), {}),
    ("xpending", ("s", "g"), {}),
    ("xpending_range", ("s", "g", "-", "+", 5), {}),
    ("xpending_range", ("s", "g", "-", "+", 5), {"consumername": "c", "idle": 100}),
    ("xpending_range", ("s", "g", "-", "+", 5), {"consumername": ""}),
    ("xpending_range", ("s", "g", None, None, None), {}),
    ("xpending_range", ("s", "g", "-", "+", "abc"), {}),
    ("xpending_range", ("s", "g", "-", "+", 5), {"idle": "abc"}),
    ("xrange", ("s",), {}),
    ("xrange", ("s", "1", "2", 3), {}),
    ("xrevrange", ("s",), {}),
    ("xrevrange", ("s", "+", "-"), {"count": 1}),
    ("xread", ({"a": "0", b"b": 5},), {"count": 2, "block": 0}),
    ("xread", ({"a": "0"},), {"max_count": 1, "count": 1}),
    ("xreadgroup", ("g", "c", {"a": ">"}), {"noack": True}),
    ("xtrim", ("s",), {"maxlen": 5}),
    ("xtrim", ("s",), {"minid": 5, "approximate": False, "limit": 2, "ref_policy": "KEEPREF"}),
    ("xtrim", ("s",), {"maxlen": 0, "limit": 0}),
]


@pytest.mark.parametrize(
    "method,args,kwargs", CALLS, ids=[f"{i}-{c[0]}" for i, c in enumerate(CALLS)]
)
@pytest.mark.filterwarnings("ignore:Call to 'set' method with experimental")
def test_same_command_as_redis_py(method, args, kwargs):
    assert_same_call(method, *args, **kwargs)


# Hypothesis: option combinations of the option-heavy methods.
ids = st.sampled_from(["*", "1-1", "0", "$", ">", "+", "-", b"2-2", 5, "bad"])
small = st.one_of(st.none(), st.integers(-2, 5), st.sampled_from(["3", 1.5, True]))
policy = st.one_of(st.none(), st.sampled_from(["KEEPREF", "DELREF", "ACKED", "bad"]))
fields = st.one_of(
    st.dictionaries(
        st.sampled_from(["a", b"b", 1]), st.sampled_from([1, "x", b"y", 2.5]), max_size=3
    ),
    st.just([("a", 1)]),
)


@settings(max_examples=300, deadline=None)
@given(
    id=ids,
    fields=fields,
    maxlen=small,
    approximate=st.booleans(),
    nomkstream=st.booleans(),
    minid=st.one_of(st.none(), ids),
    limit=small,
    ref_policy=policy,
    idmpauto=st.one_of(st.none(), st.just("p")),
    idmp=st.one_of(st.none(), st.just(("p", b"i")), st.just(["p", "i"]), st.just(("p",))),
)
def test_xadd_options(**kw):
    assert_same_call("xadd", "s", **kw)


@settings(max_examples=200, deadline=None)
@given(
    maxlen=small,
    approximate=st.booleans(),
    minid=st.one_of(st.none(), ids),
    limit=small,
    ref_policy=policy,
)
def test_xtrim_options(**kw):
    assert_same_call("xtrim", "s", **kw)


streams = st.one_of(
    st.dictionaries(st.sampled_from(["a", b"b", "c"]), ids, max_size=3),
    st.just([("a", "0")]),
)


@settings(max_examples=200, deadline=None)
@given(streams=streams, count=small, block=small, max_count=small, max_size=small)
def test_xread_options(**kw):
    assert_same_call("xread", **kw)


@settings(max_examples=300, deadline=None)
@given(
    streams=streams,
    count=small,
    block=small,
    noack=st.booleans(),
    claim_min_idle_time=small,
    max_count=small,
    max_size=small,
)
def test_xreadgroup_options(**kw):
    assert_same_call("xreadgroup", "g", "c", **kw)


@settings(max_examples=200, deadline=None)
@given(
    min_idle_time=small,
    message_ids=st.one_of(st.just([]), st.just(["1-1"]), st.just(("1-1", 2)), st.just("1-1")),
    idle=small,
    time=small,
    retrycount=small,
    force=st.one_of(st.booleans(), st.just(1)),
    justid=st.one_of(st.booleans(), st.just("y")),
)
def test_xclaim_options(**kw):
    assert_same_call("xclaim", "s", "g", "c", **kw)


@settings(max_examples=200, deadline=None)
@given(min_idle_time=small, start_id=ids, count=small, justid=st.booleans())
def test_xautoclaim_options(**kw):
    assert_same_call("xautoclaim", "s", "g", "c", **kw)


@settings(max_examples=200, deadline=None)
@given(
    min=st.one_of(st.none(), ids),
    max=st.one_of(st.none(), ids),
    count=small,
    consumername=st.one_of(st.none(), st.sampled_from(["", "c"])),
    idle=small,
)
def test_xpending_range_options(**kw):
    assert_same_call("xpending_range", "s", "g", **kw)


@settings(max_examples=200, deadline=None)
@given(
    ids=st.lists(ids, max_size=3),
    mode=st.sampled_from(["SILENT", "FAIL", "FATAL", "x"]),
    retrycount=st.one_of(st.none(), st.integers(-1, 3)),
    force=st.booleans(),
)
def test_xnack_options(ids, mode, retrycount, force):
    assert_same_call("xnack", "s", "g", mode, *ids, retrycount=retrycount, force=force)


@settings(max_examples=100, deadline=None)
@given(
    ids=st.lists(ids, max_size=3), ref_policy=st.sampled_from(["KEEPREF", "DELREF", "ACKED", "no"])
)
def test_xdelex_xackdel_options(ids, ref_policy):
    assert_same_call("xdelex", "s", *ids, ref_policy=ref_policy)
    assert_same_call("xackdel", "s", "g", *ids, ref_policy=ref_policy)


# -- encoding ----------------------------------------------------------------------------

ARGS = [
    (
        "XADD",
        "s",
        "*",
        "f",
        1,
        "g",
        2.5,
        "h",
        b"\x00",
        "i",
        memoryview(b"mv"),
        "j",
        bytearray(b"x"),
    ),
    ("XGROUP CREATE", "s", "g", "$", b"MKSTREAM"),
    ("xinfo  stream", "s"),
    (b"XINFO STREAM", "s"),
    (b"XLEN", "s"),
    ("SET", "k", 10**30, "EX", -1),
    ("SET", "k", 1e100, "x", float("inf"), "y", -0.0, "z", 0.1),
    ("SET", "k", "héllo", "x", "\u20ac"),
]


@pytest.mark.parametrize("args", ARGS)
@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
@pytest.mark.parametrize("errors", ["strict", "replace"])
def test_encoding_matches_redis_py(args, encoding, errors):
    ref_encoder = RedisEncoder(encoding, errors, False)
    xs = Redis(store=object(), encoding=encoding, encoding_errors=errors)
    try:
        expected = b"".join(PythonRespSerializer(6000, ref_encoder.encode).pack(*args))
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            xs._pack(args)
        assert str(info.value) == str(e)
        return
    tokens = xs._pack(args)
    assert all(type(t) is bytes for t in tokens)
    assert b"".join(PythonRespSerializer(6000, ref_encoder.encode).pack(*tokens)) == expected


@pytest.mark.parametrize("value", [True, False, None, [1], {"a": 1}, object(), 1j])
def test_encoding_rejects_like_redis_py(value):
    with pytest.raises(redis.exceptions.DataError) as ref:
        RedisEncoder("utf-8", "strict", False).encode(value)
    with pytest.raises(DataError) as xs:
        Redis(store=object())._pack(("SET", "k", value))
    assert str(xs.value) == str(ref.value)


VALUES = [1, -7, 10**30, 2.5, 1e100, float("inf"), -0.0, 0.1, "héllo", "\u20ac", b"\x00\xff"]


@pytest.mark.parametrize("value", [*VALUES, bytearray(b"x"), memoryview(b"mv")])
def test_store_converts_arguments_like_redis_py(value):
    """With strict UTF-8 the client leaves argument conversion to the store."""
    r = Redis(store=xstreams.Store())
    r.execute_command("XADD", "s", "1-1", "f", value)
    [(_, fields)] = r.execute_command("XRANGE", "s", "-", "+")
    assert fields == {b"f": RedisEncoder("utf-8", "strict", False).encode(value)}


@pytest.mark.parametrize("value", [True, False, None, [1], {"a": 1}, object(), 1j, "\ud800"])
def test_store_rejects_arguments_like_redis_py(value):
    with pytest.raises((redis.exceptions.DataError, UnicodeEncodeError)) as ref:
        RedisEncoder("utf-8", "strict", False).encode(value)
    with pytest.raises(type(ref.value)) as xs:
        Redis(store=xstreams.Store()).execute_command("SET", "k", value)
    if isinstance(ref.value, redis.exceptions.DataError):
        assert isinstance(xs.value, DataError)
        assert str(xs.value) == str(ref.value)


# -- response callbacks ------------------------------------------------------------------

ENTRY = [b"1-1", [b"f", b"v", b"g", b"w"]]
SAMPLES: dict = {
    "XRANGE": [[ENTRY, [b"2-0", []]], [], [ENTRY, None]],
    "XREVRANGE": [[ENTRY]],
    "XREAD": [
        [[b"s", [ENTRY]], [b"t", [ENTRY, ENTRY]]],
        None,
        {b"s": [ENTRY], b"t": [ENTRY]},
        {},
    ],
    "XREADGROUP": [[[b"s", [ENTRY, [b"3-0", None]]]], {b"s": [ENTRY]}, None],
    "XCLAIM": [[ENTRY, ENTRY], [b"1-1", b"2-2"]],
    "XAUTOCLAIM": [[b"0-0", [ENTRY], [b"9-9"]], [b"5-0", [b"1-1"], []]],
    "XPENDING": [
        [2, b"1-1", b"2-2", [[b"alice", b"2"]]],
        [0, None, None, None],
        [[b"1-1", b"alice", 10, 1], [b"2-2", b"bob", 20, 3]],
    ],
    "XINFO STREAM": [
        [
            b"length",
            1,
            b"groups",
            0,
            b"last-generated-id",
            b"1-1",
            b"first-entry",
            ENTRY,
            b"last-entry",
            ENTRY,
        ],
        {b"length": 0, b"first-entry": None, b"last-entry": None},
        [
            b"length",
            1,
            b"entries",
            [ENTRY],
            b"groups",
            [[b"name", b"g", b"consumers", [[b"name", b"c", b"pel-count", 0]]]],
        ],
        {b"length": 1, b"entries": [ENTRY], b"groups": [{b"name": b"g", b"consumers": []}]},
        [b"length", 0, b"entries", [], b"groups", []],
    ],
    "XINFO GROUPS": [[[b"name", b"g", b"consumers", 1]], [{b"name": b"g", b"lag": None}], []],
    "XINFO CONSUMERS": [[[b"name", b"c", b"pending", 1]], [{b"name": b"c", b"idle": 5}]],
    "XGROUP CREATE": [b"OK"],
    "XGROUP SETID": [b"OK"],
    "XGROUP DESTROY": [1, 0],
    "XGROUP CREATECONSUMER": [1],
    "XGROUP DELCONSUMER": [3],
    "XADD": [b"1-1", None],
    "XLEN": [3],
    "XDEL": [1],
    "XDELEX": [[1, -1, 2]],
    "XACK": [2],
    "XACKDEL": [[1, 2]],
    "XNACK": [2],
    "XTRIM": [4],
    "XCFGSET": [b"OK"],
    "XSETID": [b"OK"],
    "SET": [b"OK", None, b"old"],
    "GET": [b"v", None],
    "DEL": [1],
    "EXISTS": [2],
    "TYPE": [b"stream"],
    "KEYS": [[b"a", b"b"]],
    "SCAN": [[b"0", [b"a"]], [b"17", []]],
    "DBSIZE": [5],
    "FLUSHALL": [b"OK"],
    "FLUSHDB": [b"OK"],
    "PING": [b"PONG", b"hello"],
    "ECHO": [b"x"],
    "SELECT": [b"OK"],
    "EXPIRE": [1, 0],
    "RENAME": [b"OK"],
    "CONFIG GET": [[b"a", b"1", b"b", b"2"], {b"a": b"1"}, []],
    "CONFIG SET": [b"OK"],
    "TIME": [[b"1700000000", b"123"]],
}
OPTIONS: dict = {
    "XREAD": [{}, {"claim_min_idle_time": 5}],
    "XREADGROUP": [{}, {"claim_min_idle_time": 0}],
    "XCLAIM": [{}, {"parse_justid": True}],
    "XAUTOCLAIM": [{}, {"parse_justid": True}],
    "XPENDING": [{}, {"parse_detail": True}],
    "XINFO STREAM": [{}, {"full": True}],
    "SET": [{}, {"get": True}],
}
COMBOS = [(None, True), (2, True), (3, True), (None, False), (2, False), (3, False)]


def _run_callback(callbacks, name, raw, options):
    import copy

    raw = copy.deepcopy(raw)
    if name not in callbacks:
        return ("raw", raw)
    try:
        return ("ok", callbacks[name](raw, **options))
    except Exception as e:  # noqa: BLE001
        return ("error", type(e).__name__)


@pytest.mark.parametrize("protocol,legacy", COMBOS)
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_callbacks_match_redis_py(name, protocol, legacy):
    from redis._parsers.response_callbacks import get_response_callbacks as ref_callbacks
    from redis.client import CaseInsensitiveDict

    ref = CaseInsensitiveDict(ref_callbacks(protocol, legacy))
    ours = Redis(store=object(), protocol=protocol, legacy_responses=legacy).response_callbacks
    assert (name in ours) == (name in ref)
    for raw in SAMPLES[name]:
        for options in OPTIONS.get(name, [{}]):
            expected = _run_callback(ref, name, raw, options)
            got = _run_callback(ours, name, raw, options)
            assert repr(got) == repr(expected), (raw, options)


def test_callback_tables_cover_redis_py_for_our_commands():
    from redis._parsers.response_callbacks import get_response_callbacks as ref_callbacks

    for protocol, legacy in COMBOS:
        ours = get_response_callbacks(protocol, legacy)
        ref = ref_callbacks(protocol, legacy)
        for name in ref:
            first = name.split()[0]
            if first.startswith("X") or first in {"SET", "GET", "PING", "SCAN", "TYPE", "DEL"}:
                assert name in ours, (protocol, legacy, name)
        assert set(ours) <= set(ref)


# -- execute_command plumbing ------------------------------------------------------------


class CannedStore:
    def __init__(self, reply=None, error=None):
        self.reply = reply
        self.error = error
        self.calls = []

    def execute_command(self, *args, db=0, protocol=2):
        self.calls.append((args, db, protocol))
        if self.error is not None:
            raise self.error
        return self.reply


def test_store_call_and_defaults():
    store = CannedStore(b"OK")
    assert Redis(store=store).set("k", "v") is True
    assert Redis(store=store, db=2, protocol=2).execute_command("SET", "k", 5) is True
    assert Redis(store=store, protocol=3).execute_command("GET", "k") == b"OK"
    assert store.calls == [
        ((b"SET", b"k", b"v"), 0, 3),
        ((b"SET", b"k", b"5"), 2, 2),
        ((b"GET", b"k"), 0, 3),
    ]


def test_empty_response_and_never_decode():
    err = error_from_reply("ERR boom")
    assert Redis(store=CannedStore(error=err)).execute_command("X", **{EMPTY_RESPONSE: []}) == []
    with pytest.raises(ResponseError, match="^boom$"):
        Redis(store=CannedStore(error=err)).execute_command("X")
    r = Redis(store=CannedStore([b"a", [b"b"]]), decode_responses=True)
    assert r.execute_command("X") == ["a", ["b"]]
    assert r.execute_command("X", **{NEVER_DECODE: []}) == [b"a", [b"b"]]


def test_set_response_callback():
    r = Redis(store=CannedStore(b"12"))
    r.set_response_callback("get", int)
    assert r.get("k") == 12
    assert r.pipeline().response_callbacks["GET"] is int


def test_decode_recurses_into_maps():
    raw = {b"k": [b"v", {b"x": None, b"y": 1.5}], b"n": True}
    r = Redis(store=CannedStore(raw), decode_responses=True)
    assert r.execute_command("HELLO") == {"k": ["v", {"x": None, "y": 1.5}], "n": True}


def test_default_store_is_shared(monkeypatch):
    import xstreams

    made = []

    def default_store():
        made.append(1)
        return shared

    shared = CannedStore(b"PONG")
    monkeypatch.setattr(xstreams._stores, "default_store", default_store, raising=False)
    a, b = Redis(), Redis(db=1)
    assert made == []  # resolved lazily
    assert a.ping() is True and b.ping() is True
    assert a.store is b.store is shared
    assert [c[1] for c in shared.calls] == [0, 1]


def test_get_encoder_and_repr():
    r = Redis(store=object(), encoding="latin-1", decode_responses=True)
    enc = r.get_encoder()
    assert (enc.encoding, enc.decode_responses) == ("latin-1", True)
    assert enc.encode("é") == b"\xe9" and enc.decode(b"\xe9") == "é"
    assert enc.decode(memoryview(b"x")) == "x"
    assert "db=0" in repr(r) and "db=0" in repr(r.pipeline())


@pytest.mark.parametrize("arg", ["ifeq", "ifne", "ifdeq", "ifdne"])
def test_set_warns_about_experimental_args_like_redis_py(arg):
    with pytest.warns(UserWarning) as ref:
        _capture(redis.Redis(), "set", ("k", "v"), {arg: "x", "nx": True})
    with pytest.warns(UserWarning) as xs:
        _capture(Redis(store=object()), "set", ("k", "v"), {arg: "x", "nx": True})
    assert [str(w.message) for w in xs] == [str(w.message) for w in ref]
    assert xs[0].filename == __file__


def test_a_store_passed_as_host_is_refused():
    """``Redis(Store())`` puts the store in redis-py's ``host``: refused, not ignored (it
    would run every command on the process-wide default store)."""
    import xstreams
    import xstreams.asyncio

    store = xstreams.Store()
    for cls in (xstreams.Redis, xstreams.asyncio.Redis):
        with pytest.raises(TypeError, match=r"Redis\(store=\.\.\.\)"):
            cls(store)
    assert xstreams.Redis(store=store).ping()
