"""When ``xstreams.Redis`` takes its native methods, and that leaving them changes nothing.

The values themselves are checked against redis-py by test_client_streams.py and
test_client_keyspace.py (their ``store`` backend runs the native methods); here: the
switch between the native methods and the Python ones.
"""

from __future__ import annotations

import pytest
import xstreams
from xstreams.client import Redis


def test_native_on_a_store_with_default_settings():
    for kwargs in ({}, {"decode_responses": True}, {"protocol": 2}, {"protocol": 3},
                   {"legacy_responses": False}):  # fmt: skip
        assert Redis(store=xstreams.Store(), **kwargs)._native_on(), kwargs


def test_python_path_for_other_stores_encodings_and_subclasses():
    class Recorder:
        def execute_command(self, *args, db=0, protocol=2):
            return 1

    assert not Redis(store=Recorder())._native_on()
    assert not Redis(store=xstreams.Store(), encoding="latin-1")._native_on()
    assert not Redis(store=xstreams.Store(), encoding_errors="replace")._native_on()

    calls = []

    class Traced(Redis):
        def execute_command(self, *args, **options):
            calls.append(args[0])
            return super().execute_command(*args, **options)

    r = Traced(store=xstreams.Store())
    assert r.xadd("s", {"f": "v"}, id="1-1") == b"1-1"
    assert r.xlen("s") == 1
    assert calls == ["XADD", "XLEN"]
    assert not r._native_on()


def test_changed_callbacks_are_honoured():
    r = Redis(store=xstreams.Store())
    assert r.xadd("s", {"f": "v"}, id="1-1") == b"1-1"
    r.set_response_callback("XLEN", lambda n, **_: f"len={n}")
    assert r.xlen("s") == "len=1"
    assert not r._native_on()

    r = Redis(store=xstreams.Store())
    r.response_callbacks["XRANGE"] = lambda resp, **_: len(resp)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert r.xrange("s") == 1

    r = Redis(store=xstreams.Store())
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xgroup_create("s", "g", "0")
    r.response_callbacks["XINFO GROUPS"] = lambda resp, **_: "custom"
    assert r._native_on()
    assert r.xinfo_groups("s") == "custom"

    # XPENDING's value is built natively only while its callback is redis-py's.
    r.xreadgroup("g", "c", {"s": ">"})
    assert r.xpending("s", "g")["consumers"] == [{"name": b"c", "pending": 1}]
    r.response_callbacks["XPENDING"] = lambda resp, **opts: (resp, opts)
    assert r._native_on()
    assert r.xpending("s", "g") == ([1, b"1-1", b"1-1", [[b"c", b"1"]]], {})
    rows, opts = r.xpending_range("s", "g", "-", "+", 5)
    assert opts == {"parse_detail": True}
    assert [row[:2] for row in rows] == [[b"1-1", b"c"]]


def test_native_and_python_paths_agree_on_errors():
    native = Redis(store=xstreams.Store())
    python = Redis(store=xstreams.Store())
    python._native_off()
    cases = [
        ("xadd", ("s", {"f": True}), {}),
        ("xadd", ("s", {}), {}),
        ("xadd", ("s", {"f": 1}), {"maxlen": -1}),
        ("xrange", ("s",), {"count": 0}),
        ("xreadgroup", ("g", "c", {"s": ">"}), {"count": "x"}),
        ("xread", ({},), {}),
        ("xack", ("s", "g", None), {}),
        ("xtrim", ("s",), {}),
        ("xnack", ("s", "g", "LOUD", "1-1"), {}),
        ("xclaim", ("s", "g", "c", -1, ["1-1"]), {}),
        ("xlen", ("str",), {}),
        ("xgroup_create", ("missing", "g"), {}),
    ]
    native.set("str", "v")
    python.set("str", "v")
    for method, args, kwargs in cases:
        outcomes = []
        for r in (native, python):
            with pytest.raises(Exception) as info:  # noqa: PT011 - compared below
                getattr(r, method)(*args, **kwargs)
            outcomes.append((type(info.value), str(info.value)))
        assert outcomes[0] == outcomes[1], (method, args, kwargs)
