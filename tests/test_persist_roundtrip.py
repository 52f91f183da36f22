"""Invariant: a durable store reopened from its files holds exactly the state it had.

Seeded random command sequences (the differential generator's ``groups`` family, plus the
Redis 8.4-8.8 commands added below: XNACK, XREADGROUP ... CLAIM, XADD IDMP/IDMPAUTO,
XCFGSET, XIDMPRECORD, and SET with expiry) run on a durable store with a pinned clock
that moves forward between commands (far enough, now and then, to expire IDMP entries),
and on an in-memory twin. Afterwards:

* the durable store answers every observing command exactly as the twin does (logging
  a write never changes what it does);
* reopening the store from its logs alone (a copy of the files taken while it was open,
  i.e. what a crash or a close leaves), and from the snapshot ``compact()`` writes, gives
  the same replies again: XINFO STREAM FULL COUNT 0, XRANGE, XPENDING per group, XINFO
  GROUPS / CONSUMERS, IDMP counters, KEYS (in SCAN order), GET, in every database used;
* the snapshot each reopened store writes is byte-identical (but for its creation time)
  to the one the original store wrote: this compares what no command shows - the NACK
  zone order, the delivery-time list order, IDMP IIDs in FIFO order, node boundaries,
  key expiry times, consumers' exact seen/active times.

Variants: several databases; ``compact()`` at random points in the middle of the sequence;
automatic compaction running in the background while commands continue.

``XSTREAMS_PERSIST_SCALE`` (float, default 1) multiplies the number of seeds and commands.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
import xstreams
from differential import resp
from differential.generator import GROUP_FAMILY, Cmd, GenConfig, Generator
from persist_support import (
    NOW,
    assert_same,
    call,
    capture,
    copy_store,
    live_snapshot,
    snapshot_image,
)

SCALE = float(os.environ.get("XSTREAMS_PERSIST_SCALE", "1"))

# Small nodes so that streams span several nodes and trims/deletes cross node boundaries.
CONFIG = {"stream-node-max-entries": 7, "stream-node-max-bytes": 300}

PIDS = [b"p1", b"p2", b"producer-3"]
IIDS = [b"i1", b"i2", b"i3", b"i4", b"i5", b"\x00bin"]

PERSIST_EXTRA: Dict[str, float] = {
    "XNACK": 5,
    "XREADGROUP CLAIM": 6,
    "XADD IDMP": 10,
    "XCFGSET": 1.5,
    "XIDMPRECORD": 2,
    "SET EXPIRE": 1,
}


class PersistGenerator(Generator):
    """The differential generator plus the commands of Redis 8.4-8.8 and key expiry."""

    def __init__(self, seed: int, extra: bool = True) -> None:
        weights = dict(GROUP_FAMILY)
        if extra:
            weights.update(PERSIST_EXTRA)
        cfg = GenConfig(
            family="groups",
            weights=weights,
            malformed_rate=0.12,
            reuse_time_ids=True,  # the clock is pinned: '*' ids are deterministic
            allow_block=False,
            avoid_oracle_bugs=False,
        )
        super().__init__(seed, cfg)

    def _stream_key(self) -> bytes:
        return self.gkey(write=True)

    def g_xnack(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        n = self.rng.choice([1, 1, 2, 3])
        ids = self.pel_ids(k, g, n)
        mode = self.kw(self.rng.choice([b"SILENT", b"FAIL", b"FATAL"]))
        args = [b"XNACK", k, g, mode, self.kw(b"IDS"), b"%d" % n] + ids
        if self.chance(0.25):
            args += [self.kw(b"RETRYCOUNT"), self.rng.choice([b"0", b"2", b"7"])]
        if self.chance(0.25):
            args.append(self.kw(b"FORCE"))
        return Cmd(args, "XNACK", [k], write=True)

    def g_xreadgroup_claim(self) -> Cmd:
        k = self.gkey()
        g = self.group(k)
        c = self.consumer(k, g)
        args = [b"XREADGROUP", self.kw(b"GROUP"), g, c]
        if self.chance(0.6):
            args += [self.kw(b"COUNT"), self.rng.choice([b"1", b"2", b"3", b"10"])]
        args += [self.kw(b"CLAIM"), self.rng.choice([b"0", b"0", b"5", b"100", b"2000"])]
        if self.chance(0.15):
            args.append(self.kw(b"NOACK"))
        args += [self.kw(b"STREAMS"), k, self.rng.choice([b">", b">", b">", b"0"])]
        return Cmd(args, "XREADGROUP", [k], write=True)

    def g_xadd_idmp(self) -> Cmd:
        k = self.key(write=True)
        if self.chance(0.6):
            opt = [self.kw(b"IDMP"), self.rng.choice(PIDS), self.rng.choice(IIDS)]
        else:
            opt = [self.kw(b"IDMPAUTO"), self.rng.choice(PIDS)]
        args = [b"XADD", k] + opt
        if self.chance(0.2):
            args += [
                self.kw(b"MAXLEN"),
                self.rng.choice([b"=", b"~"]),
                b"%d" % self.rng.randint(1, 8),
            ]
        if self.chance(0.05):
            args.append(self.kw(b"NOMKSTREAM"))
        # Mostly '*' (IDMP requires it); an explicit id now and then (an error).
        args.append(b"*" if self.chance(0.93) else self.id_text(self.next_append_id(k)))
        # Few distinct payloads, so that IDMPAUTO sees duplicates.
        args += self.rng.choice([[b"f", b"v"], [b"f", b"w"], [b"a", b"1", b"b", b"2"]])
        return Cmd(args, "XADD", [k], write=True)

    def g_xcfgset(self) -> Cmd:
        k = self.key(write=True)
        args = [b"XCFGSET", k]
        opts = []
        if self.chance(0.7):
            opts.append([self.kw(b"IDMP-DURATION"), self.rng.choice([b"1", b"2", b"5", b"100"])])
        if self.chance(0.7):
            opts.append([self.kw(b"IDMP-MAXSIZE"), self.rng.choice([b"1", b"2", b"3", b"100"])])
        self.rng.shuffle(opts)
        return Cmd(args + [a for o in opts for a in o], "XCFGSET", [k], write=True)

    def g_xidmprecord(self) -> Cmd:
        k = self.key(write=True)
        i = self.rand_id(k, existing=0.85)
        args = [b"XIDMPRECORD", k, self.rng.choice(PIDS), self.rng.choice(IIDS), self.id_text(i)]
        return Cmd(args, "XIDMPRECORD", [k], write=True)

    def g_set_expire(self) -> Cmd:
        k = b"str" if self.chance(0.7) else self.rng.choice([b"s1", b"s2", b"tmp"])
        opt = self.rng.choice(
            [
                [b"PX", self.rng.choice([b"5", b"1500", b"100000"])],
                [b"EX", self.rng.choice([b"1", b"100"])],
                [b"PXAT", str(NOW + self.rng.choice([-5, 3000, 10**7])).encode()],
                [b"KEEPTTL"],
            ]
        )
        return Cmd([b"SET", k, self.rng.choice([b"v", b"w", b""])] + opt, "SET", [k], write=True)


def _refresh(gen: Generator, store: xstreams.Store, db: int, cmd: Cmd) -> None:
    """Refresh the generator's model of the keys a write touched (from the store)."""

    def oracle(args: List[bytes]) -> resp.Reply:
        return resp.parse(call(store, args, db))

    keys = [k for k in list(cmd.keys) + [a for a in cmd.args if isinstance(a, bytes)]]
    if cmd.name == "FLUSHALL":
        keys = list(gen.model.keys)
    for k in dict.fromkeys(keys):
        if k in gen.model.keys:
            gen.model.update_from_oracle(k, oracle)
    gen.forget_missing_keys()


def _clock_step(rng: random.Random, back: bool = False) -> int:
    r = rng.random()
    if back and r < 0.03:
        return -rng.randint(1, 3000)  # the system clock was set back
    if r < 0.45:
        return 0
    if r < 0.85:
        return rng.randint(1, 60)
    if r < 0.97:
        return rng.randint(500, 2500)  # crosses IDMP durations of 1-2 s, PX expiries
    return rng.randint(60_000, 200_000)


def run_sequence(
    tmp_path: Path,
    seed: int,
    n: int,
    dbs: List[int],
    compact_at: Optional[List[int]] = None,
    auto_compact: bool = False,
    extra: bool = True,
    clock_back: bool = False,
    config_changes: bool = False,
    config: Optional[dict] = None,
) -> None:
    rng = random.Random(seed * 7919 + 1)
    gens = {db: PersistGenerator(seed * 31 + db, extra=extra) for db in dbs}
    path = tmp_path / "store"
    opts: dict = {"fsync": "no"}
    if auto_compact:
        opts.update(compact_min_bytes=2048, compact_ratio=0.5)
    config = CONFIG if config is None else config
    store = xstreams.Store(path, config=config, clock_ms=NOW, **opts)
    twin = xstreams.Store(config=config, clock_ms=NOW)
    now = NOW
    compact_at = set(compact_at or [])
    for i in range(n):
        step = _clock_step(rng, clock_back)
        if config_changes and rng.random() < 0.02:
            name, value = rng.choice(
                [
                    ("stream-node-max-entries", rng.choice(["2", "5", "100", "0"])),
                    ("stream-node-max-bytes", rng.choice(["100", "300", "4096"])),
                    ("stream-idmp-duration", rng.choice(["1", "100"])),
                    ("stream-idmp-maxsize", rng.choice(["2", "100"])),
                ]
            )
            store.config_set(name, value)
            twin.config_set(name, value)
        if step:
            now += step
            store.set_clock_ms(now)
            twin.set_clock_ms(now)
        db = rng.choice(dbs)
        gen = gens[db]
        cmd = gen.next()
        args = cmd.resolved(NOW)
        got = call(store, args, db)
        want = call(twin, args, db)
        assert got == want, (
            f"seed {seed} command #{i} (db {db}) {cmd.render(NOW)}: "
            f"durable store replied {got!r}, in-memory store {want!r}"
        )
        if cmd.write and not got.startswith(b"-"):
            _refresh(gen, twin, db, cmd)
        if i in compact_at:
            store.compact()
    # The final state, at a pinned time, from the twin and the durable store.
    expected = capture(twin, dbs)
    assert_same(expected, capture(store, dbs), f"seed {seed}: durable vs in-memory")
    twin.validate()
    store.validate()

    logs_only = tmp_path / "copy"
    copy_store(path, logs_only)
    store.compact()  # waits for an automatic compaction that is running
    original_image = snapshot_image(live_snapshot(path))
    store.close()

    for where, what in ((path, "snapshot"), (logs_only, "logs")):
        reopened = xstreams.Store(where, clock_ms=now, fsync="no")
        try:
            report = reopened.load_report
            assert report["truncated"] == [], report
            if what == "snapshot":
                assert report["snapshot"] is not None and report["commands"] == 0, report
            assert_same(expected, capture(reopened, dbs), f"seed {seed}: reopened from {what}")
            check_invariants(reopened)
            reopened.compact()
            image = snapshot_image(live_snapshot(where))
            assert image == original_image, (
                f"seed {seed}: the snapshot of the store reopened from {what} differs from "
                f"the original's ({len(image)} vs {len(original_image)} bytes, first "
                f"difference at byte {_first_diff(image, original_image)})"
            )
        finally:
            reopened.close()


def check_invariants(store: xstreams.Store) -> None:
    store.validate()


def _first_diff(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + (8 if i >= 16 else 0)  # file offset (the image omits 8 bytes)
    return min(len(a), len(b))


N = max(50, int(400 * SCALE))

#: name -> (run_sequence options, seed base, number of seeds at scale 1)
VARIANTS: Dict[str, Tuple[dict, int, int]] = {
    "groups": ({"dbs": [0], "extra": False}, 0, 4),
    "redis-8.8": ({"dbs": [0]}, 100, 4),
    "several-dbs": ({"dbs": [0, 3, 15]}, 200, 2),
    "compact-in-the-middle": ({"dbs": [0, 5], "compact_mid": True}, 300, 4),
    "background-compaction": ({"dbs": [0, 1], "auto_compact": True}, 400, 2),
    "setting-changes": ({"dbs": [0, 2], "config_changes": True}, 500, 2),
    "default-node-sizes": ({"dbs": [0], "config": {}}, 600, 2),
    "clock-set-back": ({"dbs": [0], "clock_back": True}, 700, 2),
}


def _params():
    out = []
    for name, (_, base, count) in VARIANTS.items():
        for seed in range(base, base + max(1, int(count * SCALE))):
            out.append(pytest.param(name, seed, id=f"{name}-{seed}"))
    return out


def run_variant(tmp_path: Path, name: str, seed: int, n: int = N) -> None:
    opts = dict(VARIANTS[name][0])
    if opts.pop("compact_mid", False):
        opts["compact_at"] = sorted(random.Random(seed).sample(range(n), 3))
    run_sequence(tmp_path, seed, n, **opts)


@pytest.mark.parametrize("variant,seed", _params())
def test_roundtrip(tmp_path, variant, seed):
    run_variant(tmp_path, variant, seed)


# ---------------------------------------------------------------------------------------
# Deterministic cases: each engine bug the random sequences found, reduced to a few
# commands, and the round trips that must hold exactly.


def reopen_both(tmp_path: Path, build, clock: int):
    """Run ``build(store)`` on a durable store; return (original capture, capture after
    reopening from the logs, capture after reopening from a snapshot), at time ``clock``."""
    path = tmp_path / "s"
    store = xstreams.Store(path, clock_ms=NOW, fsync="no")
    build(store)
    store.set_clock_ms(clock)
    before = capture(store, [0])
    copy_store(path, tmp_path / "logs")
    store.compact()
    store.close()
    out = [before]
    for where in (tmp_path / "logs", path):
        s = xstreams.Store(where, clock_ms=clock)
        out.append(capture(s, [0]))
        s.close()
    return out


def _run(store: xstreams.Store, *cmds) -> None:
    for c in cmds:
        if isinstance(c, int):
            store.set_clock_ms(c)
        else:
            store.execute_command(*c)


@pytest.mark.parametrize("claim", ["XAUTOCLAIM", "XCLAIM"])
def test_engine_claim_of_a_deleted_entry_keeps_the_owner_seen_time(tmp_path, claim):
    cmd = (
        ("XAUTOCLAIM", "s", "g", "other", "0", "0")
        if claim == "XAUTOCLAIM"
        else ("XCLAIM", "s", "g", "other", "0", "1-0")
    )

    def build(s):
        _run(
            s,
            ("XADD", "s", "1-0", "f", "v"),
            ("XGROUP", "CREATE", "s", "g", "0"),
            NOW + 1000,
            ("XREADGROUP", "GROUP", "g", "owner", "STREAMS", "s", ">"),
            ("XDEL", "s", "1-0"),
            NOW + 5000,
            cmd,
        )

    before, from_logs, from_snapshot = reopen_both(tmp_path, build, NOW + 6000)
    assert_same(before, from_logs, "reopened from the logs")
    assert_same(before, from_snapshot, "reopened from the snapshot")


def test_engine_group_read_counter_above_entries_added(tmp_path):
    def build(s):
        _run(
            s,
            ("XADD", "s", "1-0", "f", "v"),
            ("XADD", "s", "2-0", "f", "v"),
            ("XADD", "s", "3-0", "f", "v"),
            ("XGROUP", "CREATE", "s", "g", "0"),
            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
            ("XDEL", "s", "1-0", "2-0"),
            ("XSETID", "s", "3-0", "ENTRIESADDED", "1"),
            ("XADD", "s", "4-0", "f", "v"),
            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
        )

    before, from_logs, from_snapshot = reopen_both(tmp_path, build, NOW)
    assert_same(before, from_snapshot, "reopened from the snapshot")
    assert_same(before, from_logs, "reopened from the logs")


@pytest.mark.parametrize("command", ["XTRIM", "XADD"])
def test_engine_approximate_minid_trim_with_delref(tmp_path, command):
    def build(s):
        s.config_set("stream-node-max-entries", 2)
        for i in range(1, 6):
            s.execute_command("XADD", "s", f"{i}-0", "f", "v")
        if command == "XTRIM":
            assert s.execute_command("XTRIM", "s", "MINID", "~", "4", "DELREF") == 3
        else:
            s.execute_command("XADD", "s", "MINID", "~", "4", "DELREF", "6-0", "f", "v")

    before, from_logs, from_snapshot = reopen_both(tmp_path, build, NOW)
    assert_same(before, from_snapshot, "reopened from the snapshot")
    assert_same(before, from_logs, "reopened from the logs")


def test_engine_failed_idmp_xadd_leaves_no_producer_after_reopen(tmp_path):
    # "idmp-failed-producer" (docs/differences.md): the failed XADD keeps no producer,
    # before and after reopening (8.8 keeps an empty one).
    def build(s):
        s.execute_command("XADD", "s", "18446744073709551615-18446744073709551615", "f", "v")
        with pytest.raises(xstreams.ResponseError, match="exhausted"):
            s.execute_command("XADD", "s", "IDMP", "p", "i", "*", "f", "v")

    before, from_logs, from_snapshot = reopen_both(tmp_path, build, NOW)
    assert b"pids-tracked\r\n:0\r\n" in before[3][2]
    assert_same(before, from_snapshot, "reopened from the snapshot")
    assert_same(before, from_logs, "reopened from the logs")


def test_engine_xdelex_delref_of_a_missing_entry(tmp_path):
    def build(s):
        _run(
            s,
            ("XADD", "s", "1-0", "f", "v"),
            ("XGROUP", "CREATE", "s", "g", "0"),
            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
            ("XDEL", "s", "1-0"),
        )
        assert s.execute_command("XDELEX", "s", "DELREF", "IDS", "1", "1-0") == [-1]
        assert s.execute_command("XPENDING", "s", "g")[0] == 0

    before, from_logs, from_snapshot = reopen_both(tmp_path, build, NOW)
    assert_same(before, from_logs, "reopened from the logs")


def _clock_back(s):
    _run(
        s,
        ("XADD", "s", "1-0", "f", "v"),
        ("XADD", "s", "2-0", "f", "v"),
        ("XGROUP", "CREATE", "s", "g", "0"),
        NOW + 5000,
        ("XREADGROUP", "GROUP", "g", "a", "COUNT", "1", "STREAMS", "s", ">"),
        NOW + 1000,
        ("XREADGROUP", "GROUP", "g", "b", "COUNT", "1", "STREAMS", "s", ">"),
    )


def test_engine_validate_after_reopen_when_the_clock_went_back(tmp_path):
    path = tmp_path / "s"
    s = xstreams.Store(path, clock_ms=NOW)
    _clock_back(s)
    s.validate()
    s.compact()
    s.close()
    s = xstreams.Store(path, clock_ms=NOW)
    try:
        s.validate()
    finally:
        s.close()


def test_engine_claim_order_after_reopen_when_the_clock_went_back(tmp_path):
    path = tmp_path / "s"
    s = xstreams.Store(path, clock_ms=NOW)
    _clock_back(s)
    copy_store(path, tmp_path / "copy")
    claim = ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "CLAIM", "0", "STREAMS", "s", ">")
    s.set_clock_ms(NOW + 10_000)
    original = s.execute_command(*claim)
    s.close()
    r = xstreams.Store(tmp_path / "copy", clock_ms=NOW + 10_000)
    try:
        assert r.execute_command(*claim) == original
    finally:
        r.close()


def test_hidden_state_survives_reopen_exactly(tmp_path):
    """NACK zone order, equal delivery times, IDMP FIFO order and eviction, consumer times,
    key expiry, several databases: the snapshots written before and after reopening (from
    the logs, and from a snapshot) are byte-identical."""
    path = tmp_path / "s"
    s = xstreams.Store(path, clock_ms=NOW, config={"stream-idmp-maxsize": 3})
    for i in range(1, 9):
        s.execute_command("XADD", "s", f"{i}-0", "f", f"v{i}")
    s.execute_command("XGROUP", "CREATE", "s", "g", "0")
    s.execute_command("XREADGROUP", "GROUP", "g", "a", "COUNT", "4", "STREAMS", "s", ">")
    s.execute_command("XREADGROUP", "GROUP", "g", "b", "COUNT", "3", "STREAMS", "s", ">")
    s.execute_command("XNACK", "s", "g", "FAIL", "IDS", "3", "4-0", "2-0", "6-0")
    s.execute_command("XNACK", "s", "g", "SILENT", "IDS", "1", "1-0")
    s.execute_command("XNACK", "s", "g", "FATAL", "IDS", "1", "8-0", "FORCE")
    s.advance_clock_ms(50)
    s.execute_command(
        "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "CLAIM", "0", "STREAMS", "s", ">"
    )
    s.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "idle")
    for i in range(5):
        s.execute_command("XADD", "t", "IDMP", "p", f"iid{i}", "*", "n", i)
    s.execute_command("XADD", "t", "IDMPAUTO", "q", "*", "a", "b")
    s.execute_command("SET", "k", "v", "PX", "123456")
    s.execute_command("XADD", "s", "9-0", "f", "v", db=7)
    copy_store(path, tmp_path / "logs")
    s.compact()
    image = snapshot_image(live_snapshot(path))
    s.close()
    for where in (tmp_path / "logs", path):
        r = xstreams.Store(where, clock_ms=NOW + 50)
        r.compact()
        assert snapshot_image(live_snapshot(where)) == image, where.name
        r.close()


def test_blocked_read_served_later_is_logged(tmp_path):
    import threading

    path = tmp_path / "s"
    s = xstreams.Store(path, clock_ms=NOW)
    s.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    got = []
    t = threading.Thread(
        target=lambda: got.append(
            s.execute_command("XREADGROUP", "GROUP", "g", "w", "BLOCK", "0", "STREAMS", "s", ">")
        )
    )
    t.start()
    import time

    time.sleep(0.2)
    s.advance_clock_ms(3)
    s.execute_command("XADD", "s", "5-0", "f", "v")
    t.join(10)
    assert got and got[0][0][1][0][0] == b"5-0"
    before = capture(s, [0])
    s.close()
    r = xstreams.Store(path, clock_ms=NOW + 3)
    assert_same(before, capture(r, [0]), "blocked read served after a write")
    r.close()


def test_delref_trim_that_deletes_nothing_still_logs_its_reference_cleanup(tmp_path):
    """A DELREF trim that only passes tombstones deletes no entry (reply 0) but drops
    their PEL entries ("delref-tombstones", docs/differences.md): the change is logged,
    so the reopened store has the same PEL."""
    path = str(tmp_path / "store")
    store = xstreams.Store(path)
    for cmd in (
        ("XADD", "s", "1-0", "f", "v"),
        ("XADD", "s", "2-0", "f", "v"),
        ("XADD", "s", "3-0", "f", "v"),
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
        ("XDEL", "s", "1-0", "2-0"),
    ):
        store.execute_command(*cmd)
    assert store.execute_command("XTRIM", "s", "MINID", "3-0", "DELREF") == 0
    live = store.execute_command("XPENDING", "s", "g", "-", "+", "10")
    assert [e[0] for e in live] == [b"3-0"]
    store.close()
    again = xstreams.Store(path, read_only=True)
    try:
        reopened = again.execute_command("XPENDING", "s", "g", "-", "+", "10")
        # (ID, consumer, delivery count): the idle time moves with the clock.
        assert [(e[0], e[1], e[3]) for e in reopened] == [(e[0], e[1], e[3]) for e in live]
    finally:
        again.close()
