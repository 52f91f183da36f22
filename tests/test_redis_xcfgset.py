"""XCFGSET and the stream-idmp-* settings (Redis 8.6): XCFGSET clears every IID map only
when a value changes, the lifetime counters survive it, and the defaults come from the
config when the stream is created (xcfgsetCommand in src/t_stream.c). Ports the
"XCFGSET ..." and "CONFIG SET stream-idmp-*" tests of Redis's
tests/unit/type/stream.tcl; the family's overview is in test_redis_idmp.py."""

from __future__ import annotations

import pytest
from support_idmp import counters, idmp, nid, x, xlen
from support_streams import (
    error_of,
    new_store,
    xinfo_full,
    xinfo_stream,
)

# --- XCFGSET -------------------------------------------------------------------------


def test_xcfgset_set_values_and_xinfo(s):
    idmp(s, "p1", "req-1", "field", "value")
    assert (xinfo_stream(s, "s")["idmp-duration"], xinfo_stream(s, "s")["idmp-maxsize"]) == (
        100,
        100,
    )
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 5) == b"OK"
    assert xinfo_stream(s, "s")["idmp-duration"] == 5
    assert x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 5000) == b"OK"
    assert xinfo_stream(s, "s")["idmp-maxsize"] == 5000
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 3, "IDMP-MAXSIZE", 10000) == b"OK"
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (3, 10000)
    assert x(s, "XCFGSET", "s", "idmp-maxsize", 7, "idmp-duration", 9) == b"OK"
    full = xinfo_full(s, "s")
    assert (full["idmp-duration"], full["idmp-maxsize"]) == (9, 7)


def test_xcfgset_error_on_non_existent_or_wrong_type_key(s):
    assert error_of(s, "XCFGSET", "s", "IDMP-DURATION", 5) == "ERR no such key"
    assert error_of(s, "XCFGSET", "s", "BADARG") == "ERR no such key"
    x(s, "SET", "str", "v")
    assert error_of(s, "XCFGSET", "str", "IDMP-DURATION", 5) == (
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )
    assert error_of(s, "XCFGSET") == "ERR wrong number of arguments for 'xcfgset' command"


def test_xcfgset_duration_and_maxsize_bounds(s):
    idmp(s, "p1", "req-1", "field", "value")
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 86400) == b"OK"
    for bad in (86401, 0, -100):
        assert error_of(s, "XCFGSET", "s", "IDMP-DURATION", bad) == (
            "ERR IDMP-DURATION must be between 1 and 86400 seconds"
        )
    assert xinfo_stream(s, "s")["idmp-duration"] == 86400
    assert x(s, "XCFGSET", "s", "IDMP-DURATION", 1) == b"OK"
    assert x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 10000) == b"OK"
    for bad in (10001, 0, -50):
        assert error_of(s, "XCFGSET", "s", "IDMP-MAXSIZE", bad) == (
            "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
        )
    assert x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 1) == b"OK"
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (1, 1)


def test_xcfgset_error_leaves_earlier_values_unapplied(s):
    idmp(s, "p1", "req-1", "field", "value")
    assert error_of(s, "XCFGSET", "s", "IDMP-DURATION", 5, "IDMP-MAXSIZE", 0) == (
        "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
    )
    assert xinfo_stream(s, "s")["idmp-duration"] == 100
    assert idmp(s, "p1", "req-1", "field", "dup") == nid(0)


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "ERR At least one parameter must be specified"),
        (("IDMP-DURATION",), "ERR syntax error"),
        (("IDMP-MAXSIZE",), "ERR syntax error"),
        (("INVALID",), "ERR syntax error"),
        (("IDMP-DURATION", 5, "INVALID"), "ERR syntax error"),
        (("IDMP-DURATION", 5, "IDMP-DURATION", 6), "ERR IDMP-DURATION specified multiple times"),
        (("IDMP-MAXSIZE", 5, "IDMP-MAXSIZE", 6), "ERR IDMP-MAXSIZE specified multiple times"),
        (
            ("IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"),
            "ERR value is not an integer or out of range",
        ),
        (
            ("IDMP-MAXSIZE", "INVALID", "IDMP-DURATION"),
            "ERR value is not an integer or out of range",
        ),
    ]
    + [
        ((opt, v), "ERR value is not an integer or out of range")
        for opt in ("IDMP-DURATION", "IDMP-MAXSIZE")
        for v in ("A", "AAA", "*", "-", "+", "120-5", "3.14", "000000000", opt, "")
    ]
    + [
        (
            ("IDMP-DURATION", "IDMP-DURATION", "IDMP-DURATION"),
            "ERR value is not an integer or out of range",
        ),
        (
            ("IDMP-MAXSIZE", "IDMP-MAXSIZE", "IDMP-MAXSIZE"),
            "ERR value is not an integer or out of range",
        ),
    ],
)
def test_xcfgset_invalid_syntax(s, args, message):
    idmp(s, "p1", "req-1", "field", "value")
    assert error_of(s, "XCFGSET", "s", *args) == message


def test_xcfgset_multiple_configuration_changes(s):
    idmp(s, "p1", "req-1", "field", "value")
    for d in (1, 2, 3):
        x(s, "XCFGSET", "s", "IDMP-DURATION", d)
    for m in (100, 200):
        x(s, "XCFGSET", "s", "IDMP-MAXSIZE", m)
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (3, 200)


@pytest.mark.parametrize("opt, value", [("IDMP-DURATION", 5), ("IDMP-MAXSIZE", 5000)])
def test_xcfgset_changing_a_value_clears_all_iid_history(s, opt, value):
    id1 = idmp(s, "p1", "req-1", "field", "value1", "data", "data1")
    id2 = idmp(s, "p1", "req-2", "field", "value2", "data", "data2")
    assert idmp(s, "p1", "req-2", "field", "dup") == id2
    assert x(s, "XCFGSET", "s", opt, value) == b"OK"
    assert x(s, "XRANGE", "s", "-", "+") == [
        [id1, [b"field", b"value1", b"data", b"data1"]],
        [id2, [b"field", b"value2", b"data", b"data2"]],
    ]
    new_id = idmp(s, "p1", "req-1", "field", "new1")
    assert new_id == nid(2)
    assert idmp(s, "p1", "req-1", "field", "dup1") == new_id
    assert idmp(s, "p1", "req-2", "field", "new2") == nid(3)
    assert xlen(s) == 4


@pytest.mark.parametrize(
    "args",
    [("IDMP-DURATION", 100), ("IDMP-MAXSIZE", 100), ("IDMP-DURATION", 100, "IDMP-MAXSIZE", 100)],
)
def test_xcfgset_setting_the_same_value_keeps_history(s, args):
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    id2 = idmp(s, "p2", "req-2", "field", "value2")
    for _ in range(3):
        assert x(s, "XCFGSET", "s", *args) == b"OK"
    assert idmp(s, "p1", "req-1", "field", "dup2") == id1
    assert idmp(s, "p2", "req-2", "field", "dup3") == id2
    assert xlen(s) == 2
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 2,
        "iids-added": 2,
        "iids-duplicates": 2,
    }


def test_xcfgset_repeated_same_value_calls_after_a_change(s):
    x(s, "XADD", "s", "*", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 10, "IDMP-MAXSIZE", 5000)
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    for _ in range(3):
        x(s, "XCFGSET", "s", "IDMP-DURATION", 10, "IDMP-MAXSIZE", 5000)
    assert idmp(s, "p1", "req-1", "field", "dup") == id1
    id2 = idmp(s, "p2", "req-2", "field", "value2")
    assert idmp(s, "p2", "req-2", "field", "dup2") == id2
    assert xlen(s) == 3


def test_xcfgset_one_changed_value_clears_even_if_the_other_is_unchanged(s):
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 100)
    x(s, "XCFGSET", "s", "IDMP-DURATION", 100)
    assert idmp(s, "p1", "req-1", "field", "dup") == id1
    x(s, "XCFGSET", "s", "IDMP-DURATION", 100, "IDMP-MAXSIZE", 99)
    assert idmp(s, "p1", "req-1", "field", "new") == nid(1)
    x(s, "XCFGSET", "s", "IDMP-DURATION", 50)
    assert idmp(s, "p1", "req-1", "field", "new") == nid(2)
    assert xlen(s) == 3


def test_xcfgset_clears_all_producer_histories_but_keeps_lifetime_counters(s):
    for pid in ("p1", "p2", "p3"):
        idmp(s, pid, "req-1", "field", "v")
    idmp(s, "p1", "req-1", "field", "dup")
    assert counters(s) == {
        "pids-tracked": 3,
        "iids-tracked": 3,
        "iids-added": 3,
        "iids-duplicates": 1,
    }
    x(s, "XCFGSET", "s", "IDMP-DURATION", 60)
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 3,
        "iids-duplicates": 1,
    }
    assert idmp(s, "p1", "req-1", "field", "new") == nid(3)
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 1,
        "iids-added": 4,
        "iids-duplicates": 1,
    }


def test_xcfgset_maxsize_wraparound_keeps_last_8_entries(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 8, "IDMP-DURATION", 60)
    ids = [idmp(s, "p1", f"req-{i}", "field", f"v{i}") for i in range(1, 101)]
    for i in range(93, 101):
        assert idmp(s, "p1", f"req-{i}", "field", "dup") == ids[i - 1]
    for i in range(1, 93):
        assert idmp(s, "p1", f"req-{i}", "field", "new") == nid(100 + i)
    assert xlen(s) == 193


def test_xcfgset_defaults_come_from_config_at_stream_creation():
    store = new_store(config={"stream-idmp-duration": 7, "stream-idmp-maxsize": 3})
    x(store, "XADD", "a", "*", "f", "v")
    info = xinfo_stream(store, "a")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (7, 3)
    store.config_set("stream-idmp-duration", 50)
    store.config_set("stream-idmp-maxsize", 60)
    info = xinfo_stream(store, "a")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (7, 3)
    x(store, "XGROUP", "CREATE", "b", "g", "$", "MKSTREAM")
    info = xinfo_stream(store, "b")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (50, 60)
    # Setting the stream's own values to the new defaults is a change for "a".
    idmp(store, "p", "i", "f", "v", key="a")
    x(store, "XCFGSET", "a", "IDMP-DURATION", 7)
    assert counters(store, "a")["iids-tracked"] == 1
    x(store, "XCFGSET", "a", "IDMP-DURATION", 50)
    assert counters(store, "a")["iids-tracked"] == 0
    store.validate()


def test_config_set_stream_idmp_validation(s):
    for name, low, high in (("stream-idmp-duration", 1, 86400), ("stream-idmp-maxsize", 1, 10000)):
        for bad in (high + 1, high * 5, 0, -1, -100):
            with pytest.raises(ValueError) as info:
                s.config_set(name, bad)
            assert f"argument must be between {low} and {high} inclusive" in str(info.value)
        s.config_set(name, high)
        assert s.config_get(name) == str(high)
        s.config_set(name, low)
        assert s.config_get(name) == str(low)
        s.config_set(name, 100)


def test_xidmp_alias_of_the_design_document(s):
    # Not a Redis 8.8 command: the IDMP design document (shared/seeds/004_*) spells the
    # configuration commands XIDMP CFGSET/CFGGET; xstreams accepts that spelling as an alias
    # of XCFGSET (issue #4), answering CFGGET with the two settings.
    x(s, "XADD", "s", "*", "f", "v")
    assert x(s, "XIDMP", "CFGGET", "s") == [b"duration", 100, b"maxsize", 100]
    assert x(s, "XIDMP", "CFGSET", "s", "DURATION", 30, "MAXSIZE", 7) == b"OK"
    assert x(s, "XIDMP", "CFGGET", "s", "MAXSIZE") == [b"maxsize", 7]
    info = x(s, "XINFO", "STREAM", "s", protocol=3)
    assert (info[b"idmp-duration"], info[b"idmp-maxsize"]) == (30, 7)
    assert error_of(s, "XIDMP", "CFGSET", "s", "DURATION", 0) == (
        "ERR DURATION must be between 1 and 86400 seconds"
    )
    assert error_of(s, "XIDMP", "CFGGET", "nokey") == "ERR no such key"
