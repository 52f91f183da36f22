"""IDMP expiry and eviction: an IID expires by the milliseconds of the stream ID it maps
to, once that is IDMP-DURATION seconds old, swept by the periodic cron
(handleExpiredIdmpEntries); a producer over IDMP-MAXSIZE evicts its oldest IID. The
clock is pinned: where Redis sleeps and polls, these tests move the clock and sweep.
The family's overview is in test_redis_idmp.py."""

from __future__ import annotations

from support_idmp import counters, idmp, nid, x, xlen
from support_streams import (
    NOW,
)

# --- expiry --------------------------------------------------------------------------


def test_xidmp_entries_expire_after_duration(s):
    idmp(s, "p1", "req-1", "field", "value1")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 1)  # changes the value: clears the map
    id1 = idmp(s, "p1", "req-1", "field", "value1")
    assert id1 == nid(1)
    assert idmp(s, "p1", "req-1", "field", "value2") == id1
    s.advance_clock_ms(2500)
    assert idmp(s, "p1", "req-1", "field", "value3") == nid(0, NOW + 2500)


def test_xidmp_expiry_boundary_is_exact(s):
    x(s, "XADD", "s", "*", "init", "x")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 10)
    id1 = idmp(s, "p1", "req-1", "f", "v")
    s.advance_clock_ms(9999)
    s.sweep()
    assert counters(s)["iids-tracked"] == 1
    assert idmp(s, "p1", "req-1", "f", "v") == id1
    s.advance_clock_ms(1)  # id1's ms is now exactly 10 s old
    s.sweep()
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 1,
        "iids-duplicates": 1,
    }
    assert idmp(s, "p1", "req-1", "f", "v") == nid(0, NOW + 10000)


def test_xidmp_expiry_follows_the_stream_id_not_the_insertion_time(s):
    # "*" with a last id in the future makes ids in the future: their IIDs live longer.
    x(s, "XADD", "s", f"{NOW + 60000}-0", "f", "future")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 1)
    id1 = idmp(s, "p1", "req-1", "f", "v")
    assert id1 == nid(1, NOW + 60000)
    s.advance_clock_ms(60999)
    s.sweep()
    assert idmp(s, "p1", "req-1", "f", "v") == id1
    s.advance_clock_ms(1)
    s.sweep()
    assert counters(s)["iids-tracked"] == 0


def test_xidmp_expiry_is_per_entry_and_removes_empty_producers(s):
    x(s, "XADD", "s", "*", "init", "x")
    x(s, "XCFGSET", "s", "IDMP-DURATION", 5)
    idmp(s, "p1", "a", "f", "v")  # NOW
    s.advance_clock_ms(2000)
    idmp(s, "p1", "b", "f", "v")  # NOW+2000
    idmp(s, "p2", "a", "f", "v")  # NOW+2000
    s.advance_clock_ms(3000)  # NOW+5000: p1/a expires
    s.sweep()
    assert counters(s) == {
        "pids-tracked": 2,
        "iids-tracked": 2,
        "iids-added": 3,
        "iids-duplicates": 0,
    }
    s.advance_clock_ms(2000)
    s.sweep()
    assert counters(s) == {
        "pids-tracked": 0,
        "iids-tracked": 0,
        "iids-added": 3,
        "iids-duplicates": 0,
    }


def test_expired_iids_stay_until_the_cron_sweep(s):
    """The issue's example: redis-server expires IIDs only in its once-a-second cron
    (handleExpiredIdmpEntries); XADD's lookup and XINFO leave an expired IID alone."""
    x(s, "XADD", "s", "1", "f", "x")
    x(s, "XIDMPRECORD", "s", "p", "i", "1-0")  # ms 1: long expired
    assert x(s, "XADD", "s", "IDMP", "p", "i", "*", "f", "v") == b"1-0"
    assert counters(s) == {
        "pids-tracked": 1,
        "iids-tracked": 1,
        "iids-added": 1,
        "iids-duplicates": 1,
    }
    # The sweep runs on the store clock once a second, phased by the store's first
    # command (as a server's cron by its start): 999 ms later nothing has run yet ...
    s.advance_clock_ms(999)
    assert x(s, "XADD", "s", "IDMP", "p", "i", "*", "f", "v") == b"1-0"
    assert counters(s)["iids-tracked"] == 1
    # ... and at 1000 ms the sweep runs before the next command.
    s.advance_clock_ms(1)
    assert counters(s)["pids-tracked"] == 0
    assert x(s, "XADD", "s", "IDMP", "p", "i", "*", "f", "v") == nid(0, NOW + 1000)


def test_the_cron_sweeps_with_the_time_of_its_last_tick(s):
    """A store idle for a while sweeps as the cron would have at its last tick, not with
    the time of the command that finds it due."""
    x(s, "XADD", "s", "*", "init", "x")  # NOW: the first tick
    x(s, "XCFGSET", "s", "IDMP-DURATION", 10)
    idmp(s, "p1", "a", "f", "v")  # id ms NOW: expires at a sweep at NOW + 10000
    s.advance_clock_ms(10500)  # ticks at NOW+1000 .. NOW+10000: the last one expires it
    assert counters(s)["iids-tracked"] == 0
    idmp(s, "p1", "b", "f", "v")  # id ms NOW + 10500
    s.advance_clock_ms(10400)  # NOW+20900: last tick NOW+20000 < NOW+20500
    assert counters(s)["iids-tracked"] == 1
    s.advance_clock_ms(100)  # NOW+21000: a tick, and NOW+10500 <= NOW+21000-10000
    assert counters(s)["iids-tracked"] == 0


def test_xidmp_set_evicts_entries_when_maxsize_is_reached(s):
    idmp(s, "p1", "init", "field", "init")
    x(s, "XCFGSET", "s", "IDMP-MAXSIZE", 3, "IDMP-DURATION", 60)
    ids = [idmp(s, "p1", f"req-{i}", "field", f"v{i}") for i in (1, 2, 3)]
    for i in range(3):
        assert idmp(s, "p1", f"req-{i + 1}", "field", "dup") == ids[i]
    idmp(s, "p1", "req-4", "field", "v4")
    assert idmp(s, "p1", "req-1", "field", "new") == nid(5)
    # req-2 was evicted by that; req-3 is still tracked.
    assert idmp(s, "p1", "req-3", "field", "dup2") == ids[2]
    assert idmp(s, "p1", "req-2", "field", "new") == nid(6)
    assert xlen(s) == 7
