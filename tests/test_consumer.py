"""``xstreams.consumer.Consumer``: acknowledgement on success, XNACK FAIL on errors with
immediate re-delivery, XNACK FATAL plus idempotent dead-lettering after too many
deliveries or on PoisonMessage, claiming entries a dead consumer left idle, and releasing
held entries with XNACK SILENT on shutdown."""

from __future__ import annotations

import pytest
import xstreams
from xstreams.consumer import FATAL_DELIVERY_COUNT, Consumer, PoisonMessage


@pytest.fixture
def r():
    store = xstreams.Store(clock_ms=1_000_000)
    client = xstreams.Redis(store=store, decode_responses=True)
    yield client
    store.validate()


def _fill(r, n: int) -> list:
    return [r.xadd("jobs", {"n": str(i)}) for i in range(n)]


def test_success_acknowledges(r):
    ids = _fill(r, 5)
    seen = []
    c = Consumer(r, "jobs", "g", "w1", lambda d: seen.append((d.id, d.attempt)), block_ms=None)
    stats = c.run(until_idle=True)
    assert seen == [(i, 1) for i in ids]
    assert stats.acked == 5 and stats.failed == 0
    assert r.xpending("jobs", "g")["pending"] == 0


def test_failure_is_redelivered_at_once(r):
    ids = _fill(r, 2)
    attempts: dict = {}

    def handler(d):
        attempts.setdefault(d.id, []).append(d.attempt)
        if d.id == ids[0] and d.attempt == 1:
            raise RuntimeError("transient")

    c = Consumer(r, "jobs", "g", "w1", handler, block_ms=None, min_idle_ms=60_000)
    c.run(until_idle=True)
    # No clock advance was needed: the NACKed entry came back first on the next read.
    assert attempts == {ids[0]: [1, 2], ids[1]: [1]}
    assert c.stats.acked == 2 and c.stats.failed == 1
    assert r.xpending("jobs", "g")["pending"] == 0


def test_max_deliveries_dead_letters_once(r):
    (eid,) = _fill(r, 1)

    def handler(d):
        raise ValueError("always broken")

    c = Consumer(r, "jobs", "g", "w1", handler, block_ms=None, max_deliveries=3)
    c.run(until_idle=True)
    assert c.stats.failed == 2 and c.stats.dead_lettered == 1 and c.stats.fatal_cleared == 1
    dead = r.xrange("jobs:dead")
    assert len(dead) == 1
    fields = dead[0][1]
    assert fields["n"] == "0" and fields["dlq-source-id"] == eid
    assert fields["dlq-group"] == "g" and fields["dlq-consumer"] == "w1"
    assert r.xpending("jobs", "g")["pending"] == 0
    info = r.xinfo_stream("jobs:dead")
    assert info["iids-added"] == 1 and info["iids-duplicates"] == 1


def test_poison_message_is_marked_fatal(r):
    (eid,) = _fill(r, 1)

    def handler(d):
        raise PoisonMessage("malicious")

    c = Consumer(r, "jobs", "g", "w1", handler, block_ms=None)
    c.poll()
    pending = r.xpending_range("jobs", "g", "-", "+", 10)
    assert pending[0]["message_id"] == eid
    assert pending[0]["consumer"] == "" and pending[0]["times_delivered"] == FATAL_DELIVERY_COUNT
    assert len(r.xrange("jobs:dead")) == 1
    c.poll()
    assert r.xpending("jobs", "g")["pending"] == 0 and len(r.xrange("jobs:dead")) == 1


def test_entries_of_a_dead_consumer_are_claimed_after_min_idle(r):
    ids = _fill(r, 3)
    r.xgroup_create("jobs", "g", id="0")
    r.xreadgroup("g", "crashed", {"jobs": ">"}, count=2)
    seen = []
    c = Consumer(
        r,
        "jobs",
        "g",
        "w2",
        lambda d: seen.append((d.id, d.attempt, d.idle_ms)),
        block_ms=None,
        min_idle_ms=30_000,
    )
    c.poll()
    assert seen == [(ids[2], 1, 0)]  # the crashed consumer's entries are not idle enough
    r.store.advance_clock_ms(30_000)
    c.poll()
    assert seen[1:] == [(ids[0], 2, 30_000), (ids[1], 2, 30_000)]
    assert r.xpending("jobs", "g")["pending"] == 0


def test_release_all_returns_held_entries_silently(r):
    ids = _fill(r, 3)
    r.xgroup_create("jobs", "g", id="0")
    r.xreadgroup("g", "w1", {"jobs": ">"})
    c = Consumer(r, "jobs", "g", "w1", lambda d: None, block_ms=None, create_group=False)
    assert c.release_all() == 3
    pending = r.xpending_range("jobs", "g", "-", "+", 10)
    assert [p["message_id"] for p in pending] == ids
    assert all(p["consumer"] == "" and p["times_delivered"] == 0 for p in pending)


def test_stop_from_handler_ends_run_and_releases(r):
    _fill(r, 4)
    c: Consumer

    def handler(d):
        c.stop()

    c = Consumer(r, "jobs", "g", "w1", handler, block_ms=None, count=2)
    c.run()
    assert c.stats.acked == 2 and c.stats.reads == 1
    assert r.xpending("jobs", "g")["pending"] == 0


def test_bad_settings():
    with pytest.raises(ValueError):
        Consumer(None, "s", "g", "c", print, max_deliveries=0, create_group=False)
    with pytest.raises(ValueError):
        Consumer(None, "s", "g", "c", print, count=0, create_group=False)
