"""Pipelines, with and without transaction: results, errors and their messages.

Each scenario runs through a redis-py pipeline on a real redis-server and through an
xstreams pipeline on the ``backend`` fixture; results (exception instances included)
and raised errors must be the same.
"""

from __future__ import annotations

import pytest
import xstreams
from client_support.compare import compare
from xstreams.client import Pipeline, Redis
from xstreams.exceptions import DataError, XStreamsError

pytest_plugins = ("client_support.fixtures",)

CONFIGS = {
    "default": {},
    "decode": {"decode_responses": True},
    "resp2": {"protocol": 2},
    "resp3": {"protocol": 3},
}


@pytest.fixture(params=list(CONFIGS.values()), ids=list(CONFIGS))
def client_kwargs(request):
    return request.param


@pytest.fixture(params=[True, False], ids=["multi", "plain"])
def transaction(request):
    return request.param


@pytest.fixture
def check(ref_factory, xs_factory, client_kwargs):
    def run(steps, setup=(), **kwargs):
        return compare(ref_factory, xs_factory, steps, setup=setup, **client_kwargs, **kwargs)

    return run


SETUP = [
    ("xadd", ("s", {"a": 1}), {"id": "1-1"}),
    ("xadd", ("s", {"b": 2}), {"id": "2-1"}),
    ("xgroup_create", ("s", "g", "0")),
    ("set", ("str", "v")),
]


def test_results_and_callbacks(check, transaction):
    def scenario(r):
        pipe = r.pipeline(transaction=transaction)
        assert pipe.xadd("s", {"c": 3}, id="3-1") is pipe
        pipe.xlen("s").xrange("s").xrevrange("s", count=1)
        pipe.xreadgroup("g", "c1", {"s": ">"}, count=2)
        pipe.xpending("s", "g").xpending_range("s", "g", "-", "+", 10)
        pipe.xclaim("s", "g", "c2", 0, ["1-1"], justid=True)
        pipe.xautoclaim("s", "g", "c3", 0, count=1)
        pipe.xinfo_stream("s").xinfo_groups("s").xinfo_consumers("s", "g")
        pipe.xinfo_stream("s", full=True)
        pipe.xread({"s": "0"}, count=1).xread({"s": "$"}, block=100)
        pipe.xgroup_create("s", "g2", "$").xgroup_setid("s", "g2", "0").xgroup_destroy("s", "g2")
        pipe.set("k", "v", get=True).set("k", "w", nx=True).get("k").type("s").exists("s", "k")
        pipe.ping().echo("e").dbsize().execute_command("XINFO", "STREAM", "s")
        pipe.xtrim("s", maxlen=2, approximate=False).xdel("s", "3-1").delete("k")
        assert len(pipe) == 30
        return pipe.execute()

    check([scenario], setup=SETUP)


def test_natively_queued_xack_xdel(check, transaction):
    def scenario(r):
        pipe = r.pipeline(transaction=transaction)
        pipe.xreadgroup("g", "c1", {"s": ">"})
        assert pipe.xack("s", "g", "1-1", b"2-1", "9-9") is pipe
        assert pipe.xack("s", "nope", "1-1").xack("missing", "g", "1-1") is pipe
        assert pipe.xdel("s", "1-1", b"7-7").xdel("missing", "1-1") is pipe
        pipe.xpending("s", "g").xlen("s")
        return pipe.execute()

    check([scenario], setup=SETUP)


def test_native_queueing_stacks_what_the_python_methods_stack():
    from xstreams.client import _PythonCommands

    r = Redis(store=xstreams.Store())
    native = r.pipeline().xack("s", "g", "1-1", b"2-1", 3).xdel("s", "1-1").xdel("s")
    python = r.pipeline()
    _PythonCommands.xack(python, "s", "g", "1-1", b"2-1", 3)
    _PythonCommands.xdel(python, "s", "1-1")
    _PythonCommands.xdel(python, "s")
    assert native.command_stack == python.command_stack

    # While watching (before MULTI) a command runs at once, as in the Python method.
    r.xadd("s", {"f": "v"}, id="1-1")
    with r.pipeline() as pipe:
        pipe.watch("s")
        assert pipe.xack("s", "g", "1-1") == 0
        assert pipe.xdel("s", "1-1") == 1
        assert pipe.command_stack == []


def test_exec_time_errors(check, transaction):
    def run(raise_on_error):
        def scenario(r):
            pipe = r.pipeline(transaction=transaction)
            pipe.xadd("s", {"c": 3}, id="3-1").get("s").xlen("s").xadd("s", {"x": 1}, id="1-0")
            pipe.xreadgroup("nogroup", "c", {"s": ">"}).xrange("s", "-", "bad").xlen("s")
            try:
                return pipe.execute(raise_on_error=raise_on_error)
            finally:
                assert len(pipe) == 0

        return scenario

    check([run(True), run(False), ("xlen", ("s",))], setup=SETUP)


def test_queue_time_errors(check, transaction):
    def run(raise_on_error, *bad):
        def scenario(r):
            pipe = r.pipeline(transaction=transaction)
            pipe.xadd("s", {"c": 3}, id="3-1")
            for args in bad:
                pipe.execute_command(*args)
            pipe.xlen("s").get("str")
            return pipe.execute(raise_on_error=raise_on_error)

        return scenario

    check(
        [
            run(True, ("NOSUCHCOMMAND", "x")),
            run(False, ("XADD", "s")),
            run(False, ("XGROUP", "NOPE", "x"), ("XLEN",)),
            ("xlen", ("s",)),
            ("xrange", ("s",)),
        ],
        setup=SETUP,
    )


def test_error_annotation_is_truncated(check, transaction):
    def scenario(r):
        pipe = r.pipeline(transaction=transaction)
        pipe.xadd("str", {f"field{i}": "x" * 20 for i in range(10)}, id="1-1")
        pipe.execute_command("XADD", "s", b"\xff\xfe", "f", "v")
        return pipe.execute(raise_on_error=True)

    def scenario2(r):
        pipe = r.pipeline(transaction=transaction)
        pipe.execute_command("XADD", "s", b"\xff\xfe", "f", "v")
        pipe.execute_command("XADD", "s", memoryview(b"1-1"), "f", "v")
        return pipe.execute(raise_on_error=True)

    check([scenario, scenario2], setup=SETUP)


def test_client_side_errors(check, transaction):
    def queue_invalid(r):
        pipe = r.pipeline(transaction=transaction)
        pipe.xlen("s")
        try:
            pipe.xadd("s", {})
        finally:
            assert len(pipe) == 1

    def encode_invalid(r):
        pipe = r.pipeline(transaction=transaction)
        pipe.xadd("s", {"c": 3}, id="9-1").set("k", True).xlen("s")
        try:
            pipe.execute()
        finally:
            assert len(pipe) == 0

    check([queue_invalid, encode_invalid, ("xlen", ("s",)), ("exists", ("k",))], setup=SETUP)


def test_pipeline_object(check, transaction):
    def scenario(r):
        out = []
        with r.pipeline(transaction=transaction) as pipe:
            out.append(bool(pipe))
            out.append(pipe.execute())
            pipe.set("a", 1).set("b", 2)
            out.append(len(pipe))
            pipe.reset()
            out.append(len(pipe))
            out.append(pipe.execute())
            pipe.set("a", 1).get("a")
            out.append(pipe.execute())
            pipe.get("a")
            out.append(pipe.execute())
            pipe.set("z", 1)
        out.append(r.exists("z"))
        return out

    def explicit_multi(r):
        pipe = r.pipeline(transaction=False)
        pipe.multi()
        pipe.set("m", 1).get("m").get("s")
        return pipe.execute(raise_on_error=False)

    def nested_multi(r):
        pipe = r.pipeline(transaction=False)
        pipe.multi()
        pipe.multi()

    def late_multi(r):
        pipe = r.pipeline(transaction=False)
        pipe.set("m", 1)
        pipe.multi()

    check([scenario, explicit_multi, nested_multi, late_multi], setup=SETUP)


def test_atomic_flag_reaches_the_store():
    calls = []

    class Recorder:
        def execute_command(self, *args, db=0, protocol=2):
            raise AssertionError("not expected")

        def execute_many(self, commands, db=0, atomic=True, protocol=2):
            calls.append((commands, db, atomic, protocol))
            return [b"OK" for _ in commands]

    r = Redis(store=Recorder(), db=3)
    assert r.pipeline().set("a", 1).set("b", 2.5).execute() == [True, True]
    assert r.pipeline(transaction=False).set("a", b"x").execute() == [True]
    assert Redis(store=Recorder(), protocol=2).pipeline().set("a", 1).execute() == [True]
    assert calls == [
        ([(b"SET", b"a", b"1"), (b"SET", b"b", b"2.5")], 3, True, 3),
        ([(b"SET", b"a", b"x")], 3, False, 3),
        ([(b"SET", b"a", b"1")], 0, True, 2),
    ]
    assert isinstance(r.pipeline(), Pipeline)
    assert r.pipeline(shard_hint="x").shard_hint == "x"


def test_store_returning_wrong_count_is_an_error():
    class Broken:
        def execute_many(self, commands, db=0, atomic=True, protocol=2):
            return []

    with pytest.raises(XStreamsError, match="Wrong number of response items"):
        Redis(store=Broken()).pipeline().set("a", 1).execute()


def test_data_error_class():
    class Never:
        def execute_many(self, *a, **k):
            raise AssertionError

    pipe = Redis(store=Never()).pipeline()
    pipe.set("k", None)
    with pytest.raises(DataError, match="Invalid input of type: 'NoneType'"):
        pipe.execute()
