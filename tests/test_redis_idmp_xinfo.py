"""The IDMP fields of XINFO STREAM (pids-tracked, iids-tracked, iids-added,
iids-duplicates, idmp-duration, idmp-maxsize): their order and which are lifetime
counters (xinfoReplyWithStreamInfo in src/t_stream.c). Ports the "XINFO STREAM ...
iids/pids ..." tests of Redis's tests/unit/type/stream.tcl; the family's overview is
in test_redis_idmp.py."""

from __future__ import annotations

from support_idmp import auto, counters, idmp, nid, x
from support_streams import (
    xinfo_full,
    xinfo_stream,
)

# --- XINFO STREAM counters -----------------------------------------------------------


def test_xinfo_stream_idmp_fields_order(s):
    x(s, "XADD", "s", "*", "field", "value")
    keys = [k.decode() for k in x(s, "XINFO", "STREAM", "s")[::2]]
    assert keys == [
        "length",
        "radix-tree-keys",
        "radix-tree-nodes",
        "last-generated-id",
        "max-deleted-entry-id",
        "entries-added",
        "recorded-first-entry-id",
        "idmp-duration",
        "idmp-maxsize",
        "pids-tracked",
        "iids-tracked",
        "iids-added",
        "iids-duplicates",
        "groups",
        "first-entry",
        "last-entry",
    ]
    full_keys = [k.decode() for k in x(s, "XINFO", "STREAM", "s", "FULL")[::2]]
    assert full_keys == keys[:13] + ["entries", "groups"]


def test_xinfo_stream_iids_tracked_and_added(s):
    x(s, "XADD", "s", "*", "field", "value")
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 0,
        "iids-duplicates": 0,
    }
    idmp(s, "p1", "req-1", "field", "value1")
    assert counters(s)["iids-tracked"] == 1
    idmp(s, "p1", "req-2", "field", "value2")
    idmp(s, "p1", "req-1", "field", "duplicate")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 2,
        "iids-added": 2,
        "iids-duplicates": 1,
    }
    full = xinfo_full(s, "s")
    assert (
        full["pids-tracked"],
        full["iids-tracked"],
        full["iids-added"],
        full["iids-duplicates"],
    ) == (1, 2, 2, 1)


def test_xinfo_stream_iids_added_is_lifetime_counter_after_eviction(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 3)
    for i in (1, 2, 3):
        idmp(s, "p1", f"req-{i}", "field", f"v{i}")
    assert counters(s)["iids-tracked"] == 3
    assert counters(s)["iids-added"] == 4
    idmp(s, "p1", "req-4", "field", "v4")
    idmp(s, "p1", "req-5", "field", "v5")
    assert (counters(s)["iids-tracked"], counters(s)["iids-added"]) == (3, 6)


def test_xinfo_stream_iids_duplicates_is_lifetime_counter(s):
    idmp(s, "p1", "req-1", "field", "v1")
    assert counters(s)["iids-duplicates"] == 0
    idmp(s, "p1", "req-1", "field", "v1-dup")
    idmp(s, "p1", "req-1", "field", "v1-dup2")
    assert (counters(s)["iids-duplicates"], counters(s)["iids-added"]) == (2, 1)
    idmp(s, "p1", "req-2", "field", "v2")
    idmp(s, "p1", "req-1", "field", "v1-dup3")
    auto(s, "p1", "a", "b")
    auto(s, "p1", "a", "b")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 3,
        "iids-added": 3,
        "iids-duplicates": 4,
    }


def test_xinfo_stream_iids_duplicates_persists_after_eviction(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 3)
    for req in ("req-1", "req-1", "req-2", "req-2"):
        idmp(s, "p1", req, "field", "v")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 2,
        "iids-added": 3,
        "iids-duplicates": 2,
    }
    idmp(s, "p1", "req-3", "field", "v3")
    idmp(s, "p1", "req-4", "field", "v4")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 3,
        "iids-added": 5,
        "iids-duplicates": 2,
    }
    idmp(s, "p1", "req-3", "field", "v3-dup")
    idmp(s, "p1", "req-4", "field", "v4-dup")
    assert counters(s)["iids-duplicates"] == 4
    assert idmp(s, "p1", "req-1", "field", "evicted") == nid(5)


def test_xinfo_stream_iids_duplicates_with_multiple_producers(s):
    idmp(s, "p1", "req-1", "field", "v1-p1")
    idmp(s, "p2", "req-1", "field", "v1-p2")
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 2,
        "iids-added": 2,
        "iids-duplicates": 0,
    }
    idmp(s, "p1", "req-1", "field", "v1-p1-dup")
    idmp(s, "p2", "req-1", "field", "v1-p2-dup")
    assert counters(s)["iids-duplicates"] == 2


def test_xinfo_stream_iids_counters_after_cfgset_clears_history(s):
    for i in (1, 2, 3):
        idmp(s, "p1", f"req-{i}", "field", f"v{i}")
    idmp(s, "p1", "req-1", "field", "v1-dup")
    idmp(s, "p1", "req-2", "field", "v2-dup")
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 3,
        "iids-added": 3,
        "iids-duplicates": 2,
    }
    x(s, "XCFGSET", "s", "IDMP-DURATION", 60)
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 3,
        "iids-duplicates": 2,
    }
    idmp(s, "p1", "req-4", "field", "v4")
    assert (counters(s)["iids-tracked"], counters(s)["iids-added"]) == (1, 4)


def test_xinfo_stream_pids_tracked(s):
    x(s, "XADD", "s", "*", "field", "value")
    assert counters(s)["pids-tracked"] == 0
    idmp(s, "p1", "req-1", "field", "v1")
    assert counters(s)["pids-tracked"] == 1
    idmp(s, "p1", "req-2", "field", "v2")
    assert counters(s)["pids-tracked"] == 1
    idmp(s, "p2", "req-1", "field", "v3")
    idmp(s, "producer3", "req-1", "field", "v4")
    assert counters(s)["pids-tracked"] == 3
    assert xinfo_full(s, "s")["pids-tracked"] == 3


def test_xinfo_stream_iids_tracked_counts_across_producers(s):
    for pid, req in (("p1", 1), ("p1", 2), ("p2", 1), ("p2", 2), ("p2", 3)):
        idmp(s, pid, f"req-{req}", "field", "v")
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 5,
        "iids-added": 5,
        "iids-duplicates": 0,
    }
    idmp(s, "p1", "req-1", "field", "dup")
    idmp(s, "p2", "req-2", "field", "dup")
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 5,
        "iids-added": 5,
        "iids-duplicates": 2,
    }


def test_xinfo_stream_idmp_duration_and_maxsize_fields(s):
    idmp(s, "p1", "req-1", "field", "value1")
    info = xinfo_stream(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (
        int(s.config_get("stream-idmp-duration")),
        int(s.config_get("stream-idmp-maxsize")),
    )
    x(s, "XCFGSET", "s", "IDMP-DURATION", 300, "IDMP-MAXSIZE", 50)
    info, full = xinfo_stream(s, "s"), xinfo_full(s, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (300, 50)
    assert (full["idmp-duration"], full["idmp-maxsize"]) == (300, 50)
    x(s, "XCFGSET", "s", "IDMP-DURATION", 600)
    assert (xinfo_stream(s, "s")["idmp-duration"], xinfo_stream(s, "s")["idmp-maxsize"]) == (
        600,
        50,
    )
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 100)
    assert (xinfo_stream(s, "s")["idmp-duration"], xinfo_stream(s, "s")["idmp-maxsize"]) == (
        600,
        100,
    )
    resp3 = x(s, "XINFO", "STREAM", "s", protocol=3)
    assert (resp3[b"idmp-duration"], resp3[b"iids-added"]) == (600, 1)
