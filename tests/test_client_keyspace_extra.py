"""The keyspace and server methods a drop-in needs beside the stream commands: expiry,
UNLINK/RENAME/COPY, DUMP/RESTORE, INFO, TIME, CONFIG, and WATCH transactions.

Same approach as test_client_keyspace.py: the same calls through redis-py (real
redis-server) and through the xstreams client (``backend``) must give equal results.
A test whose engine command xstreams does not have yet is skipped with the command's
name when it runs on the xstreams store (the socket backend still checks the client).
"""

from __future__ import annotations

import datetime

import pytest
import xstreams
from client_support.compare import compare, reference_version

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


def _needs(backend, *commands):
    """Skip on the xstreams store while the engine lacks one of ``commands``."""
    if isinstance(backend, xstreams.Store):
        missing = [c for c in commands if c not in xstreams.command_names()]
        if missing:
            pytest.skip(f"the engine has no {', '.join(missing).upper()} yet")


@pytest.fixture
def check(ref_factory, xs_factory, client_kwargs):
    def run(steps, setup=(), **kwargs):
        return compare(ref_factory, xs_factory, steps, setup=setup, **client_kwargs, **kwargs)

    return run


def test_unlink_rename_copy(check):
    check(
        [
            ("unlink", ("a", "b", "missing")),
            ("exists", ("a", "b")),
            ("rename", ("s", "s2")),
            ("rename", ("missing", "x")),
            ("renamenx", ("s2", "str")),
            ("renamenx", ("s2", "s3")),
            ("copy", ("s3", "c1")),
            ("copy", ("s3", "c1")),
            ("copy", ("s3", "c1"), {"replace": True}),
            ("copy", ("s3", "c2"), {"destination_db": 1}),
            ("copy", ("missing", "c3")),
            ("xrange", ("c1",)),
            ("type", ("c1",)),
        ],
        setup=[
            ("set", ("a", 1)),
            ("set", ("b", 2)),
            ("set", ("str", "v")),
            ("xadd", ("s", {"f": "v"}), {"id": "1-1"}),
        ],
    )


def test_time_and_dbsize(check):
    def time_shape(r):
        secs, micros = r.time()
        return (type(secs), type(micros), 0 <= micros < 1_000_000, secs > 1_700_000_000)

    check([time_shape, ("dbsize", ()), ("flushdb", ()), ("dbsize", ())], setup=[("set", ("a", 1))])


def test_expiry(check, backend):
    _needs(backend, "expire", "pexpire", "expireat", "pexpireat", "ttl", "pttl", "persist")
    _needs(backend, "expiretime", "pexpiretime")
    far = 4_102_444_800  # 2100-01-01

    def ttl_range(r):
        return (0 < r.ttl("s") <= 100, 0 < r.pttl("s") <= 100_000)

    check(
        [
            ("ttl", ("s",)),
            ("pttl", ("s",)),
            ("ttl", ("missing",)),
            ("expire", ("s", 100)),
            ttl_range,
            ("expire", ("s", 50), {"gt": True}),
            ("expire", ("s", 50), {"lt": True}),
            ("expire", ("s", 500), {"nx": True}),
            ("expire", ("s", datetime.timedelta(seconds=100)), {"xx": True}),
            ("pexpire", ("s", 100_000)),
            ("pexpire", ("s", datetime.timedelta(seconds=90))),
            ("expire", ("missing", 10)),
            ("persist", ("s",)),
            ("persist", ("s",)),
            ("ttl", ("s",)),
            ("expireat", ("s", far)),
            ("expiretime", ("s",)),
            ("pexpireat", ("s", far * 1000 + 5)),
            ("pexpiretime", ("s",)),
            ("expireat", ("s", datetime.datetime(2100, 1, 2, tzinfo=datetime.timezone.utc))),
            ("expiretime", ("s",)),
            ("pexpireat", ("s", datetime.datetime(2100, 1, 3, tzinfo=datetime.timezone.utc))),
            ("pexpiretime", ("s",)),
            ("expiretime", ("missing",)),
            ("expire", ("s", 10), {"nx": True, "xx": True}),
            ("expire", ("s", "x")),
            ("expire", ("s", 0)),
            ("exists", ("s",)),
            ("xlen", ("s",)),
        ],
        setup=[("xadd", ("s", {"f": "v"}), {"id": "1-1"})],
    )


def test_dump_restore(check, backend):
    _needs(backend, "dump", "restore")

    def roundtrip(r):
        payload = r.dump("s")
        out = [type(payload), r.restore("s2", 0, payload)]
        out.append(r.xrange("s2"))
        try:
            r.restore("s2", 0, payload)
        except Exception as e:  # noqa: BLE001 - compared
            out.append(str(e))
        out.append(r.restore("s2", 0, payload, replace=True))
        out.append(r.restore("s3", 100_000, payload, idletime=5, frequency=None))
        out.append(r.xlen("s3"))
        return out

    check(
        [
            ("dump", ("missing",)),
            roundtrip,
            ("restore", ("x", 0, b"garbage")),
            ("restore", ("x", 0, b"garbage"), {"idletime": "abc"}),
        ],
        setup=[("xadd", ("s", {"f": "v"}), {"id": "1-1"})],
    )


def test_info_and_config(check, backend):
    _needs(backend, "info", "config")

    def info_shape(r):
        info = r.info()
        keyspace = r.info("keyspace")
        return (type(info), "redis_version" in info, keyspace.get("db0", {}).get("keys"))

    # stream-idmp-duration came with 8.6: an older reference server (the 8.2.3
    # fallback) is asked only for the settings it has.
    newer = ("stream-idmp-duration",) if reference_version() >= (8, 6) else ()
    check(
        [
            info_shape,
            ("config_get", ("stream-node-max-entries",)),
            ("config_set", ("stream-node-max-entries", 50)),
            ("config_get", ("stream-node-max-entries",)),
            ("config_set", ("stream-node-max-entries", 100)),
            ("config_get", ("stream-node-max-bytes", *newer)),
            ("config_set", ("no-such-setting", 1)),
        ],
        setup=[("set", ("a", 1))],
    )


def test_client_watch_warns_like_redis_py(ref, xs):
    for client in (ref, xs):
        with pytest.warns(DeprecationWarning, match="Call WATCH from a Pipeline object"):
            assert client.watch("a") is None
        with pytest.warns(DeprecationWarning, match="Call UNWATCH from a Pipeline object"):
            assert client.unwatch() is None


def _watch_scenarios():
    def untouched(r):
        pipe = r.pipeline()
        out = [pipe.watch("s"), pipe.xlen("s")]
        pipe.multi()
        pipe.xadd("s", {"f": "w"}, id="2-1").xlen("s")
        out.append(pipe.execute())
        return out

    def touched(r):
        pipe = r.pipeline()
        pipe.watch("s", "other")
        r.xadd("s", {"f": "x"}, id="3-1")
        pipe.multi()
        pipe.xadd("s", {"f": "y"}, id="4-1")
        try:
            pipe.execute()
        except Exception as e:  # noqa: BLE001 - compared
            return [type(e).__name__, str(e), r.xlen("s"), pipe.watching]
        return "ran"

    def unwatched(r):
        pipe = r.pipeline()
        pipe.watch("s")
        out = [pipe.unwatch()]
        r.xadd("s", {"f": "z"}, id="5-1")
        pipe.multi()
        pipe.xlen("s")
        out.append(pipe.execute())
        return out

    def transaction_helper(r):
        def body(pipe):
            n = pipe.xlen("s")
            pipe.multi()
            pipe.xadd("s", {"n": n}, id=f"{10 + n}-1")

        return r.transaction(body, "s")

    def watch_after_multi(r):
        pipe = r.pipeline()
        pipe.multi()
        pipe.watch("s")

    return [untouched, touched, unwatched, transaction_helper, watch_after_multi]


def test_watch_transactions(ref_factory, xs_factory, client_kwargs):
    compare(
        ref_factory,
        xs_factory,
        _watch_scenarios(),
        setup=[("xadd", ("s", {"f": "v"}), {"id": "1-1"})],
        **client_kwargs,
    )
