"""Keyspace and server commands, argument encoding, databases and client options.

Same approach as test_client_streams.py: the same calls through redis-py (real
redis-server) and through the xstreams client (``backend``) must give equal results.
"""

from __future__ import annotations

import datetime

import pytest
from client_support.compare import compare
from xstreams.client import Redis, StrictRedis

pytest_plugins = ("client_support.fixtures",)

CONFIGS = {
    "default": {},
    "decode": {"decode_responses": True},
    "resp2": {"protocol": 2},
    "resp3-decode": {"protocol": 3, "decode_responses": True},
    "unified": {"legacy_responses": False},
}


@pytest.fixture(params=list(CONFIGS.values()), ids=list(CONFIGS))
def client_kwargs(request):
    return request.param


@pytest.fixture
def check(ref_factory, xs_factory, client_kwargs):
    def run(steps, setup=(), **kwargs):
        return compare(ref_factory, xs_factory, steps, setup=setup, **client_kwargs, **kwargs)

    return run


def test_keys_and_types(check):
    check(
        [
            ("type", ("s",)),
            ("type", ("str",)),
            ("type", ("missing",)),
            ("exists", ("s",)),
            ("exists", ("s", "str", "missing", "s")),
            ("exists", ()),
            lambda r: "s" in r,
            lambda r: sorted(r.keys()),
            lambda r: sorted(r.keys("s*")),
            lambda r: sorted(r.keys(b"st?")),
            ("keys", ("nomatch*",)),
            ("dbsize", ()),
            ("delete", ("s", "missing")),
            ("delete", ("str", "s2", "nothing")),
            ("delete", ()),
            ("dbsize", ()),
        ],
        setup=[
            ("xadd", ("s", {"a": 1}), {"id": "1-1"}),
            ("xadd", ("s2", {"a": 1}), {"id": "1-1"}),
            ("set", ("str", "v")),
        ],
    )


def _sorted_scan(r, **kwargs):
    """A full SCAN iteration (cursor values are the server's own business; what must match
    is the set of keys a complete iteration returns, and that it ends with cursor 0)."""
    cursor, seen = 0, []
    for _ in range(10_000):
        cursor, keys = r.scan(cursor=cursor, **kwargs)
        seen.extend(keys)
        if cursor == 0:
            break
    return cursor, sorted(set(seen))


def test_scan(check):
    check(
        [
            lambda r: _sorted_scan(r),
            lambda r: _sorted_scan(r, match="k1*"),
            lambda r: _sorted_scan(r, count=1000),
            lambda r: _sorted_scan(r, _type="STREAM"),
            lambda r: _sorted_scan(r, _type="string", match="*"),
            lambda r: sorted(r.scan_iter()),
            lambda r: sorted(r.scan_iter(match="k2*", count=3)),
            lambda r: sorted(r.scan_iter(_type="stream")),
            ("scan", (), {"cursor": "abc"}),
            ("scan", (), {"count": 0}),
        ],
        setup=[("set", (f"k{i}", i)) for i in range(30)]
        + [("xadd", (f"stream{i}", {"a": 1}), {"id": "1-1"}) for i in range(3)],
    )


@pytest.mark.filterwarnings("ignore:Call to 'set' method with experimental")
def test_set_get(check):
    future = datetime.datetime(2100, 1, 1)
    check(
        [
            ("set", ("k", "v")),
            ("get", ("k",)),
            ("get", ("missing",)),
            ("set", ("k", "v2"), {"nx": True}),
            ("set", ("k2", "v2"), {"nx": True}),
            ("set", ("k3", "v3"), {"xx": True}),
            ("set", ("k", "v3"), {"xx": True}),
            ("set", ("k", "v4"), {"get": True}),
            ("set", ("new", "v"), {"get": True}),
            ("set", ("k", "v5"), {"nx": True, "get": True}),
            ("set", ("k", "v5"), {"ex": 100}),
            ("set", ("k", "v5"), {"ex": "100"}),
            ("set", ("k", "v5"), {"ex": datetime.timedelta(seconds=30)}),
            ("set", ("k", "v5"), {"px": 100000}),
            ("set", ("k", "v5"), {"px": datetime.timedelta(seconds=30)}),
            ("set", ("k", "v5"), {"exat": future}),
            ("set", ("k", "v5"), {"exat": 4102444800}),
            ("set", ("k", "v5"), {"pxat": future}),
            ("set", ("k", "v5"), {"pxat": 4102444800000}),
            ("set", ("k", "v6"), {"keepttl": True}),
            ("set", ("k", "v6"), {"ex": 0}),
            ("set", ("k", "v6"), {"ex": -5}),
            ("set", ("k", "v6"), {"ex": 1.5}),
            ("set", ("k", "v6"), {"ex": "1.5"}),
            ("set", ("k", "v6"), {"px": "100"}),
            ("set", ("k", "v6"), {"ex": 1, "px": 1}),
            ("set", ("k", "v6"), {"ex": 1, "keepttl": True}),
            ("set", ("k", "v6"), {"nx": True, "xx": True}),
            ("set", ("k", "v6"), {"nx": True, "ifeq": "x"}),
            ("set", ("int", 42)),
            ("get", ("int",)),
            ("set", ("float", 1.25)),
            ("set", ("float2", 1e20)),
            ("get", ("float2",)),
            ("set", ("bytes", b"\x00\xff")),
            ("get", ("bytes",)),
            ("set", ("mv", memoryview(b"abc"))),
            ("get", ("mv",)),
            ("set", ("uni", "héllo")),
            ("get", ("uni",)),
            ("set", ("bool", True)),
            ("set", ("none", None)),
            ("set", (b"bin\xffkey", "v")),
            ("get", (b"bin\xffkey",)),
            ("set", (7, "seven")),
            ("get", (7,)),
            ("xadd", ("s", {"a": 1}), {"id": "1-1"}),
            ("get", ("s",)),
            ("set", ("s", "v"), {"get": True}),
            ("set", ("s", "v")),
            ("type", ("s",)),
            ("get", ("k",)),
            lambda r: r["k"],
            lambda r: r["missing"],
            lambda r: r.__setitem__("item", "x") or r.get("item"),
            lambda r: r.__delitem__("item") or r.exists("item"),
        ]
    )


def test_server_commands(check):
    check(
        [
            ("ping", ()),
            ("echo", ("hello",)),
            ("echo", (b"\x00bin",)),
            ("echo", (12,)),
            ("dbsize", ()),
            ("flushdb", ()),
            ("dbsize", ()),
            ("set", ("a", 1)),
            ("flushdb", (), {"asynchronous": True}),
            ("dbsize", ()),
            ("set", ("a", 1)),
            ("flushall", ()),
            ("set", ("a", 1)),
            ("flushall", (), {"asynchronous": True}),
            ("dbsize", ()),
            ("execute_command", ("PING",)),
            ("execute_command", ("PING", "msg")),
            ("execute_command", ("ECHO", "x")),
            ("execute_command", ("DBSIZE",)),
            ("execute_command", ("FLUSHDB",)),
        ]
    )


def test_databases(ref_factory, xs_factory):
    steps = [
        lambda r: r.set("k", "db0"),
        lambda r: r.xadd("s", {"a": 0}, id="1-0"),
        lambda r: r.__class__(**_same_store(r), db=3).set("k", "db3"),
        lambda r: r.__class__(**_same_store(r), db=3).xadd("s", {"a": 3}, id="3-0"),
        lambda r: r.get("k"),
        lambda r: r.__class__(**_same_store(r), db=3).get("k"),
        lambda r: r.__class__(**_same_store(r), db=3).xrange("s"),
        lambda r: r.__class__(**_same_store(r), db=3).dbsize(),
        lambda r: r.__class__(**_same_store(r), db=3).flushdb(),
        lambda r: r.dbsize(),
        lambda r: r.__class__(**_same_store(r), db=3).dbsize(),
        lambda r: r.__class__(**_same_store(r), db=3).set("k", "again"),
        lambda r: r.flushall(),
        lambda r: r.__class__(**_same_store(r), db=3).dbsize(),
        lambda r: r.__class__(**_same_store(r), db=99).get("k"),
    ]
    compare(ref_factory, xs_factory, steps)


def _same_store(r):
    if isinstance(r, Redis) or getattr(r, "store", None) is not None:  # sync or asyncio
        return {"store": r.store}
    kw = r.get_connection_kwargs()
    return {"host": kw["host"], "port": kw["port"]}


def test_pipelined_db_and_decode(ref_factory, xs_factory):
    steps = [
        lambda r: r.pipeline().set("k", "v").get("k").xadd("s", {"f": "é"}, id="1-1").execute(),
        lambda r: r.pipeline(transaction=False).xrange("s").type("s").execute(),
    ]
    compare(ref_factory, xs_factory, steps, db=2, decode_responses=True)


def test_encoding_options(ref_factory, xs_factory):
    steps = [
        ("set", ("k", "h\u00e9")),
        ("get", ("k",)),
        ("set", ("k2", b"\xff")),
        ("get", ("k2",)),
        ("xadd", ("s", {"f": "\u00e9"}), {"id": "1-1"}),
        ("xrange", ("s",)),
        ("set", ("k3", "\u20ac")),
    ]
    compare(ref_factory, xs_factory, steps, encoding="latin-1", decode_responses=True)
    compare(
        ref_factory,
        xs_factory,
        steps,
        encoding="latin-1",
        encoding_errors="replace",
        decode_responses=True,
    )
    compare(ref_factory, xs_factory, steps, encoding_errors="replace", decode_responses=True)
    compare(ref_factory, xs_factory, steps, encoding_errors="ignore", decode_responses=True)


def test_from_url(backend):
    r = Redis.from_url("redis://localhost:6379/4", store=backend)
    assert r.db == 4
    r.set("k", "v")
    assert Redis(store=backend, db=4).get("k") == b"v"
    assert Redis(store=backend).get("k") is None
    r = Redis.from_url("redis://user:pw@localhost?db=5&decode_responses=True", store=backend)
    assert r.db == 5
    assert r.get_encoder().decode_responses is True
    r = Redis.from_url("redis://localhost/6?db=7", db=1, store=backend)
    assert r.db == 7
    r = Redis.from_url("redis://localhost", db=2, store=backend)
    assert r.db == 2
    r = Redis.from_url("rediss://localhost:6380/1?protocol=2&foo=bar", store=backend)
    assert (r.db, r.get_connection_kwargs()["protocol"]) == (1, 2)
    assert r.xadd("s", {"a": 1}, id="1-1") == b"1-1"
    r = Redis.from_url("unix:///tmp/redis.sock?db=3&decode_responses=no", store=backend)
    assert r.db == 3 and r.get_encoder().decode_responses is False
    assert StrictRedis.from_url("redis://h/0", store=backend).ping() is True
    with pytest.raises(ValueError, match="Redis URL must specify one of the following schemes"):
        Redis.from_url("http://localhost/0", store=backend)
    with pytest.raises(ValueError, match="Invalid value for 'db' in connection URL."):
        Redis.from_url("redis://localhost?db=x", store=backend)


def test_connection_kwargs_are_accepted(backend):
    r = Redis(
        "somehost",
        6380,
        1,
        "password",
        socket_timeout=1.0,
        socket_connect_timeout=2.0,
        retry=object(),
        retry_on_timeout=True,
        ssl=True,
        ssl_cert_reqs="none",
        max_connections=10,
        single_connection_client=True,
        health_check_interval=30,
        client_name="me",
        username="user",
        store=backend,
    )
    assert r.db == 1
    assert r.ping() is True
    with r as same:
        assert same is r
    r.close()
    assert r.ping() is True  # a closed redis-py client reconnects; ours just works
    with pytest.raises(TypeError):
        Redis(nonsense=1, store=backend)  # type: ignore[call-arg]


def test_protocol_validation(backend, redis_py):
    import xstreams.exceptions as xe

    with pytest.raises(xe.ConnectionError, match="protocol must be either 2 or 3"):
        Redis(protocol=4, store=backend)
    with pytest.raises(xe.ConnectionError, match="protocol must be an integer"):
        Redis(protocol="x", store=backend)
    assert Redis(protocol="2", store=backend).xadd("s", {"a": 1}, id="1-1") == b"1-1"
    with pytest.raises(redis_py.exceptions.ConnectionError):
        Redis(protocol=1, store=backend)


def test_connection_pool_settings_are_honoured(backend, redis_py):
    pool = redis_py.ConnectionPool(db=5, decode_responses=True, protocol=2)
    r = Redis(connection_pool=pool, store=backend)
    assert r.db == 5
    r.set("k", "v")
    assert r.get("k") == "v"
    assert Redis(store=backend, db=5).get("k") == b"v"
    pool.disconnect()
