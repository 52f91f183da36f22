"""Invariant: with ``fsync="always"``, a write acknowledged to the caller survives the
writer being killed at any moment - during a write, during compaction, during the repair
of a previous crash - and nothing else is damaged.

A child process (``persist_child.py``) writes a mix of commands (XADD, XDEL, XREADGROUP,
XACK, XADD IDMP, SET) and prints each one before the call and its result after it; the
test kills it with SIGKILL at a random moment, then reopens the store read-only and checks
that the state is exactly the acknowledged one, plus or minus the single command that was
in flight: every acknowledged entry, delivery, acknowledgement and value is there, nothing
unacknowledged is (beyond the in-flight command), ``validate()`` passes, the load report
names at most a cut tail of the last log, and ``xstreams check`` finds no other damage.
The next child reopens the same store (repairing the cut tail), so repairs get killed too.
At the end every acknowledged IDMP IID still deduplicates to its original entry.

The second test does the same while a second thread of the child calls ``compact()`` in a
loop, so kills land inside compactions (before, during and after the snapshot is written
and the manifest switched).

``XSTREAMS_CRASH_TRIALS`` sets the number of kills per test (default 20; a longer run:
``XSTREAMS_CRASH_TRIALS=500 pytest tests/test_persist_crash.py``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest
import xstreams
from persist_support import child_env, load_cli

TRIALS = int(os.environ.get("XSTREAMS_CRASH_TRIALS", "20"))
CHILD = Path(__file__).resolve().parent / "persist_child.py"
STRING_KEYS = [f"k{i}" for i in range(5)]


@dataclass
class Model:
    """The acknowledged state."""

    entries: Dict[str, str] = field(default_factory=dict)  # id -> n
    pel: Set[str] = field(default_factory=set)
    strings: Dict[str, str] = field(default_factory=dict)
    t_entries: Dict[str, str] = field(default_factory=dict)
    iids: Dict[str, str] = field(default_factory=dict)  # iid -> id
    # The child's set-up (XGROUP CREATE ... MKSTREAM) is acknowledged once it prints READY;
    # a child killed before that may leave a store without the group.
    group: bool = False

    def copy(self) -> Model:
        return Model(
            dict(self.entries), set(self.pel), dict(self.strings), dict(self.t_entries),
            dict(self.iids), self.group,
        )  # fmt: skip


def read_state(path: Path) -> Tuple[Model, dict]:
    """The state of the store at ``path``, loaded read-only, and its load report."""
    with _no_internal_error():
        store = xstreams.Store(path, read_only=True)
    try:
        store.validate()
        m = Model()
        for eid, fields in store.execute_command("XRANGE", "s", "-", "+"):
            m.entries[eid.decode()] = dict(zip(fields[::2], fields[1::2]))[b"n"].decode()
        try:
            pel = store.execute_command("XPENDING", "s", "g", "-", "+", "1000000")
            m.group = True
        except xstreams.exceptions.NoGroupError:
            pel = []
        for p in pel:
            m.pel.add(p[0].decode())
        for k in STRING_KEYS:
            v = store.execute_command("GET", k)
            if v is not None:
                m.strings[k] = v.decode()
        for eid, fields in store.execute_command("XRANGE", "t", "-", "+"):
            m.t_entries[eid.decode()] = dict(zip(fields[::2], fields[1::2]))[b"n"].decode()
        return m, store.load_report
    finally:
        store.close()


class _no_internal_error:
    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if et is not None and issubclass(et, xstreams.exceptions.InternalError):
            raise AssertionError(f"engine panic while loading: {ev}")
        return False


class _Reader(threading.Thread):
    """Reads a child's stdout as it comes (so the pipe never blocks it); ``ready`` is set
    once the child has opened the store."""

    def __init__(self, proc: subprocess.Popen) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.chunks: List[str] = []
        self.ready = threading.Event()
        self.start()

    def run(self) -> None:
        for line in self.proc.stdout:
            self.chunks.append(line)
            if line.startswith('{"ready"'):
                self.ready.set()

    def text(self) -> str:
        return "".join(self.chunks)


def parse_output(out: str) -> Tuple[List[Tuple[dict, object]], Optional[dict], bool]:
    """(acknowledged ops with results, the op in flight or None, reached READY)."""
    acked: List[Tuple[dict, object]] = []
    pending_op: Optional[dict] = None
    ready = False
    for line in out.split("\n"):
        if not line.endswith("}"):
            continue  # the cut last line of a killed child
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if "ready" in obj:
            ready = True
        elif "op" in obj:
            assert pending_op is None, f"op without result before {obj}"
            pending_op = obj
        elif "ok" in obj:
            assert pending_op is not None, f"result without op: {obj}"
            acked.append((pending_op, obj["ok"]))
            pending_op = None
        elif "compact_error" in obj:
            raise AssertionError(f"compact() failed in the child: {obj['compact_error']}")
    return acked, pending_op, ready


def apply(m: Model, op: dict, res) -> None:
    kind = op["op"]
    if kind == "XADD":
        assert res not in m.entries, f"XADD returned an existing id {res}"
        m.entries[res] = str(op["i"])
    elif kind == "XDEL":
        assert res == (1 if op["id"] in m.entries else 0), (op, res)
        m.entries.pop(op["id"], None)
    elif kind == "XREADGROUP":
        for eid in res:
            assert eid in m.entries and eid not in m.pel, (op, res)
            m.pel.add(eid)
    elif kind == "XACK":
        assert res == (1 if op["id"] in m.pel else 0), (op, res)
        m.pel.discard(op["id"])
    elif kind == "IDMP":
        if op["iid"] in m.iids:
            assert res == m.iids[op["iid"]], f"IDMP duplicate {op} got {res}"
        else:
            m.iids[op["iid"]] = res
            m.t_entries[res] = str(op["i"])
    elif kind == "SET":
        m.strings[op["key"]] = op["value"]
    else:  # pragma: no cover
        raise AssertionError(op)


def check_against(model: Model, inflight: Optional[dict], actual: Model, where: str) -> Model:
    """Assert ``actual`` is the acknowledged state, with or without the in-flight op;
    returns the model to continue with (the actual state)."""
    kind = inflight["op"] if inflight else None
    assert actual.group or not model.group, f"{where}: the acknowledged consumer group is lost"

    def added(mine: Dict[str, str], theirs: Dict[str, str], what: str) -> Dict[str, str]:
        lost = set(mine) - set(theirs)
        new = {k: v for k, v in theirs.items() if k not in mine}
        for k in mine.keys() & theirs.keys():
            assert mine[k] == theirs[k], f"{where}: {what} {k} changed: {mine[k]} -> {theirs[k]}"
        return {"lost": lost, "new": new}

    e = added(model.entries, actual.entries, "entry")
    if kind == "XDEL" and e["lost"] == {inflight["id"]}:
        e["lost"] = set()
    assert not e["lost"], f"{where}: acknowledged entries lost: {sorted(e['lost'])}"
    if kind == "XADD" and len(e["new"]) == 1:
        assert list(e["new"].values()) == [str(inflight["i"])], f"{where}: {e['new']}"
    else:
        assert not e["new"], f"{where}: unacknowledged entries appeared: {e['new']}"

    lost_pel = model.pel - actual.pel
    new_pel = actual.pel - model.pel
    if kind == "XACK" and lost_pel == {inflight["id"]}:
        lost_pel = set()
    assert not lost_pel, f"{where}: acknowledged deliveries lost from the PEL: {lost_pel}"
    if kind == "XREADGROUP":
        assert len(new_pel) <= 3 and new_pel <= set(actual.entries) | set(model.entries), new_pel
        assert all(x not in model.pel for x in new_pel)
    else:
        assert not new_pel, f"{where}: unacknowledged deliveries appeared: {new_pel}"

    for k in STRING_KEYS:
        want = model.strings.get(k)
        got = actual.strings.get(k)
        if got != want:
            assert kind == "SET" and inflight["key"] == k and got == inflight["value"], (
                f"{where}: {k} is {got!r}, acknowledged {want!r}"
            )

    t = added(model.t_entries, actual.t_entries, "IDMP entry")
    assert not t["lost"], f"{where}: acknowledged IDMP entries lost: {t['lost']}"
    nxt = actual.copy()
    nxt.iids = dict(model.iids)
    if kind == "IDMP" and len(t["new"]) == 1 and inflight["iid"] not in model.iids:
        assert list(t["new"].values()) == [str(inflight["i"])], t["new"]
        nxt.iids[inflight["iid"]] = next(iter(t["new"]))
    else:
        assert not t["new"], f"{where}: unacknowledged IDMP entries appeared: {t['new']}"
    return nxt


def run_trials(tmp_path: Path, mode: str, trials: int, seed: int) -> Dict[str, int]:
    rng = random.Random(seed)
    path = tmp_path / "store"
    cli = load_cli()
    model = Model()
    counter = 0
    stats = {"acked": 0, "cut_tails": 0, "killed_before_ready": 0, "compactions": 0}
    leftovers: Set[str] = set()
    for trial in range(trials):
        proc = subprocess.Popen(
            [
                sys.executable,
                str(CHILD),
                mode,
                str(path),
                str(counter),
                str(rng.randrange(1 << 30)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
            text=True,
        )
        reader = _Reader(proc)
        if rng.random() < 0.15:
            # During start-up: the open, the repair of the previous crash's cut tail.
            time.sleep(rng.uniform(0.0, 0.4))
        else:
            assert reader.ready.wait(60), f"child did not start: {proc.stderr.read()}"
            time.sleep(rng.uniform(0.0, 0.35))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        reader.join()
        out, err = reader.text(), proc.stderr.read()
        assert proc.returncode == -signal.SIGKILL, f"child ended early ({proc.returncode}): {err}"
        assert "Traceback" not in err, err
        acked, inflight, ready = parse_output(out)
        stats["killed_before_ready"] += not ready
        stats["compactions"] += out.count('"compacted"')
        where = f"trial {trial} ({len(acked)} acknowledged, in flight: {inflight})"
        model.group |= ready
        for op, res in acked:
            apply(model, op, res)
            counter = max(counter, int(op.get("i", 0)))
        if inflight:
            counter = max(counter, int(inflight.get("i", 0)))
        stats["acked"] += len(acked)
        actual, report = read_state(path) if (path / "MANIFEST").exists() else (Model(), None)
        if report is not None:
            last_log = report["logs"][-1]
            assert all(f == last_log for f, _, _ in report["truncated"]), report
            stats["cut_tails"] += bool(report["truncated"])
            with open(os.devnull, "w") as devnull:
                status, rep = cli.check_store(path, out=devnull)
            only_cut = rep.cut is not None and len(rep.problems) == 1
            assert status == 0 or only_cut, f"{where}: xstreams check: {rep.problems}"
            listed = set(cli.listed_files(cli.inspect_store(path)))
            leftovers |= {
                p.name for p in path.iterdir() if p.name not in listed | {"MANIFEST", "LOCK"}
            }
        model = check_against(model, inflight, actual, where)
    # Finally: a writable open repairs, every acknowledged IID still deduplicates.
    store = xstreams.Store(path, fsync="always")
    try:
        store.validate()
        for iid, eid in sorted(model.iids.items()):
            got = store.execute_command("XADD", "t", "IDMP", "p", iid, "*", "n", "again")
            assert got.decode() == eid, f"IID {iid}: {got} instead of {eid}"
    finally:
        store.close()
    stats["leftover_files"] = sorted(leftovers)
    return stats


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_killed_writer_keeps_every_acknowledged_write(tmp_path):
    stats = run_trials(tmp_path, "write", TRIALS, seed=1)
    assert stats["acked"] > TRIALS * 5, stats
    print(stats)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_killed_during_compaction_keeps_every_acknowledged_write(tmp_path):
    stats = run_trials(tmp_path, "compact", TRIALS, seed=2)
    assert stats["compactions"] > 0, stats
    print(stats)


def test_crash_leftovers_are_cleaned_up(tmp_path):
    path = tmp_path / "s"
    s = xstreams.Store(path)
    s.execute_command("XADD", "s", "1-1", "f", "v")
    s.compact()
    s.close()
    # What kills at the worst moments leave: the log the new snapshot replaced (killed
    # before deleting it), a half-written snapshot, a new log not yet in the MANIFEST.
    (path / "log.1.aof").write_bytes(b"#XS:CFG stream-node-max-entries 100\r\n")
    (path / "snapshot.3.xss.tmp").write_bytes(b"XSTRSNP1" + bytes(100))
    (path / "log.3.aof").write_bytes(b"#XS:CFG stream-node-max-entries 100\r\n")
    s = xstreams.Store(path)
    s.execute_command("XADD", "s", "2-1", "f", "v")
    s.compact()
    s.close()
    cli = load_cli()
    listed = set(cli.listed_files(cli.inspect_store(path)))
    left = sorted(p.name for p in path.iterdir() if p.name not in listed | {"MANIFEST", "LOCK"})
    assert left == [], left
