"""Workloads, the timing harness, scaling curves and the redis-benchmark ceiling.

Timing: a *rep* runs a workload on one driver in growing chunks until a time budget or an
operation cap is reached and gives ops/s; reps of all drivers are interleaved (rep 1 of
every driver, then rep 2, ...) so that load from other processes spreads over all peers,
and the best rep is reported (noise only ever adds time).
"""

from __future__ import annotations

import gc
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from bench_drivers import Driver
from bench_peers import (
    ID_BASE,
    Backend,
    RedisServerBackend,
    Unsupported,
    values,
)


@dataclass
class Cell:
    """The result of one workload on one driver."""

    rates: list = field(default_factory=list)  # ops/s of each rep
    note: str = ""  # "n/a (8.2.3)", "error"
    entries: int = 0  # entries processed (read workloads)
    detail: str = ""  # the error message

    @property
    def ok(self) -> bool:
        return bool(self.rates) and not self.note

    @property
    def best(self) -> float:
        return max(self.rates) if self.rates else 0.0

    @property
    def us(self) -> float:
        return 1e6 / self.best if self.best else float("nan")


#: Keep CPython's cyclic GC off while timing (as ``timeit`` does): otherwise replies that
#: materialise thousands of lists (a batch of XRANGEs) trigger collections whose cost
#: depends on everything else this benchmark process holds (all peers' modules).
GC_OFF = True


def time_ops(
    run: Callable[[int, int], None], budget: float, max_ops: int, off: int, chunk: int = 16
) -> tuple[int, float]:
    """Run ``run(n, off)`` in doubling chunks until ``budget`` seconds or ``max_ops``."""
    ops = 0
    was_on = gc.isenabled()
    if GC_OFF:
        gc.disable()
    try:
        t0 = time.perf_counter()
        elapsed = 0.0
        while ops < max_ops:
            n = min(chunk, max_ops - ops)
            run(n, off + ops)
            ops += n
            elapsed = time.perf_counter() - t0
            if elapsed >= budget:
                break
            chunk = min(chunk * 2, 1 << 16)
    finally:
        if was_on:
            gc.enable()
    return ops, elapsed


def random_starts(lo: int, hi: int, seed: int = 7, count: int = 4096) -> list[bytes]:
    """``count`` (a power of two) random stream IDs ``ID_BASE+r`` with ``lo <= r <= hi``."""
    rnd = random.Random(seed)
    return [b"%d-0" % (ID_BASE + rnd.randint(lo, max(lo, hi))) for _ in range(count)]


def first_ids(n: int, start: int = 1) -> list[bytes]:
    return [b"%d-0" % (ID_BASE + i) for i in range(start, start + n)]


# ---------------------------------------------------------------------------------------
# The main table
# ---------------------------------------------------------------------------------------


@dataclass
class Workload:
    key: str
    label: str
    unit: str  # what one op is
    need: frozenset
    setup: Callable[[Driver, dict], dict]
    run: Callable[[Driver, dict, int, int], None]
    before_rep: Optional[Callable[[Driver, dict], None]] = None
    max_ops: int = 10_000_000
    per_op_entries: int = 0
    group: str = ""  # workloads of a group have their reps interleaved


READ_KEY = b"rd"
READ_SIZE = 64  # value size of the read dataset


class Context:
    """Settings of a run plus which backends already hold the read dataset."""

    def __init__(self, read_entries: int) -> None:
        self.read_entries = read_entries
        self.prepared: set = set()

    def read_dataset(self, b: Backend) -> None:
        """``rd``: ``read_entries`` entries, group ``pe`` whose PEL holds all of them."""
        if id(b) in self.prepared:
            return
        b.fill(READ_KEY, 1, self.read_entries + 1, READ_SIZE)
        b.group_create(READ_KEY, b"pe")
        b.read_all(READ_KEY, b"pe", b"c1", self.read_entries)
        self.prepared.add(id(b))


def _delete(b: Backend, key: bytes) -> None:
    if b.family == "burner":
        b.run(b.db.delete(key))
    else:
        b.raw(b"DEL", key)


def _xadd_workload(size: int, mode: Optional[str], max_ops: int) -> Workload:
    name = {None: "XADD", "idmp": "XADD IDMP", "idmpauto": "XADD IDMPAUTO"}[mode]
    need = frozenset() if mode is None else frozenset({"idmp", "xcfgset"})
    tag = {None: "xadd", "idmp": "idmp", "idmpauto": "idmpauto"}[mode]

    def setup(d: Driver, st: dict) -> dict:
        return {"key": f"{tag}{size}:{d.name}".encode(), "off": 0}

    def before_rep(d: Driver, st: dict) -> None:
        b = d.backend
        _delete(b, st["key"])
        if mode is not None:
            # as in Redis's own IDMP benchmark: IDMP-MAXSIZE 10000
            b.raw(b"XADD", st["key"], b"*", b"f", b"init")
            b.raw(b"XCFGSET", st["key"], b"IDMP-MAXSIZE", b"10000")

    def run(d: Driver, st: dict, n: int, off: int) -> None:
        d.xadd(st["key"], size, n, off, mode)

    return Workload(f"{tag}-{size}", f"{name} {size} B", "op", need, setup, run,
                    before_rep, max_ops, group=f"xadd-{size}")  # fmt: skip


def _xrange_setup(ctx: Context) -> Callable[[Driver, dict], dict]:
    def setup(d: Driver, st: dict) -> dict:
        ctx.read_dataset(d.backend)
        return {"starts": random_starts(1, ctx.read_entries - 100)}

    return setup


def _readack_setup(ctx: Context) -> Callable[[Driver, dict], dict]:
    def setup(d: Driver, st: dict) -> dict:
        ctx.read_dataset(d.backend)
        g = f"ra:{d.name}".encode()
        d.backend.group_create(READ_KEY, g)
        return {"group": g}

    return setup


def _nackclaim_setup(ctx: Context) -> Callable[[Driver, dict], dict]:
    def setup(d: Driver, st: dict) -> dict:
        ctx.read_dataset(d.backend)
        g = f"nc:{d.name}".encode()
        d.backend.group_create(READ_KEY, g)
        d.backend.read_all(READ_KEY, g, b"c1", ctx.read_entries)
        return {"group": g, "held": first_ids(100)}

    return setup


def workloads(ctx: Context, xadd_max_ops: int) -> list[Workload]:
    """Every workload of the main table, in display order."""
    wl = [_xadd_workload(s, None, xadd_max_ops) for s in (8, 64, 512)]
    for mode in ("idmp", "idmpauto"):
        wl += [_xadd_workload(s, mode, xadd_max_ops) for s in (8, 64, 512)]
    no = frozenset()
    m = ctx.read_entries
    wl += [
        Workload(
            "xrange", "XRANGE <random start> + COUNT 100", "op", no, _xrange_setup(ctx),
            lambda d, st, n, off: d.xrange(READ_KEY, st["starts"], n, off),
            per_op_entries=100,
        ),
        Workload(
            "readack", "XREADGROUP COUNT 100 + XACK", "cycle", no, _readack_setup(ctx),
            lambda d, st, n, off: d.readack(READ_KEY, st["group"], b"c1", n, st),
            per_op_entries=100,
        ),
        Workload(
            "nackclaim", "XNACK 100 + XREADGROUP CLAIM", "cycle",
            frozenset({"xnack", "claim"}), _nackclaim_setup(ctx),
            lambda d, st, n, off: d.nackclaim(READ_KEY, st["group"], n, st),
            per_op_entries=100,
        ),
        Workload(
            "xpending", f"XPENDING summary (PEL {m:,})", "op", no,
            lambda d, st: (ctx.read_dataset(d.backend), {})[1],
            lambda d, st, n, off: d.xpending(READ_KEY, b"pe", n),
        ),
        Workload(
            "xpending-range", f"XPENDING <random start> + 100 (PEL {m:,})", "op", no,
            _xrange_setup(ctx),
            lambda d, st, n, off: d.xpending_range(READ_KEY, b"pe", st["starts"], n, off),
            per_op_entries=100,
        ),
    ]  # fmt: skip
    return wl


def run_table(
    wls: list[Workload],
    drivers: list[Driver],
    reps: int,
    budget: float,
    log: Callable[[str], None],
) -> dict:
    """Run every workload on every driver; returns {workload key: {driver name: Cell}}.

    Workloads of one ``group`` (plain XADD, IDMP and IDMPAUTO of one value size) have
    their reps interleaved too, so that their ratios (the IDMP overhead) are measured
    under the same load.
    """
    out: dict = {}
    groups: dict = {}
    for wl in wls:
        groups.setdefault(wl.group or wl.key, []).append(wl)
    done = 0
    for members in groups.values():
        gc.collect()
        active: list = []
        for wl in members:
            cells = out[wl.key] = {d.name: Cell() for d in drivers}
            for d in drivers:
                missing = wl.need - d.caps
                if missing:
                    cells[d.name].note = d.na_reason(sorted(missing)[0])
                    continue
                try:
                    st = wl.setup(d, {})
                    if wl.before_rep:
                        wl.before_rep(d, st)
                    wl.run(d, st, 8, 0)  # warm-up
                    active.append((wl, d, st, {"off": 8}))
                except Unsupported:
                    cells[d.name].note = d.na_reason("")
                except Exception as e:  # keep going: one broken peer must not stop the run
                    cells[d.name].note = "error"
                    cells[d.name].detail = f"{type(e).__name__}: {e}"[:160]
        for rep in range(reps):
            k = rep % max(1, len(active))
            for wl, d, st, pos in active[k:] + active[:k]:
                cell = out[wl.key][d.name]
                if cell.note:
                    continue
                try:
                    if wl.before_rep:
                        wl.before_rep(d, st)
                    before = st.get("entries", 0)
                    ops, secs = time_ops(
                        lambda n, off, d=d, st=st, wl=wl: wl.run(d, st, n, off),
                        budget, wl.max_ops, pos["off"],
                    )  # fmt: skip
                    pos["off"] += ops
                    cell.rates.append(ops / secs)
                    cell.entries += st.get("entries", 0) - before
                except Unsupported:
                    cell.note = d.na_reason("")
                except Exception as e:
                    cell.note = "error"
                    cell.detail = f"{type(e).__name__}: {e}"[:160]
            for i, wl in enumerate(members):
                log(_progress_line(done + i + 1, len(wls), wl, rep, reps, out[wl.key], drivers))
        done += len(members)
    return out


def fmt_rate(r: float) -> str:
    if r >= 1e6:
        return f"{r / 1e6:.2f}M"
    if r >= 1e3:
        return f"{r / 1e3:.1f}k"
    return f"{r:.0f}"


def _progress_line(wi, nw, wl, rep, reps, cells, drivers) -> str:
    parts = []
    for d in drivers:
        c = cells[d.name]
        if c.rates and not c.note:
            parts.append(f"{d.name} {fmt_rate(c.best)}")
    return f"[{wi:2d}/{nw}] {wl.label:<34} rep {rep + 1}/{reps}: " + " | ".join(parts)


# ---------------------------------------------------------------------------------------
# Scaling curves
# ---------------------------------------------------------------------------------------


def _cost_us(run: Callable[[int, int], None], k: int, reps: int, budget: float) -> float:
    """Best µs/op over ``reps`` timed runs of at most ``k`` ops (and ``budget`` s) each."""
    best = float("inf")
    off = 1 << 20
    for _ in range(reps):
        ops, secs = time_ops(run, budget, k, off)
        off += ops
        best = min(best, secs / ops * 1e6)
    return best


@dataclass
class Series:
    """µs per op of one driver at each x."""

    label: str
    points: list = field(default_factory=list)  # (x, µs/op)
    note: str = ""


def stream_scaling(
    groups: list[tuple[Backend, list[Driver], int]],
    sizes: list[int],
    reps: int,
    budget: float,
    log: Callable[[str], None],
) -> dict:
    """XADD and XRANGE COUNT 100 cost as the stream grows.

    ``groups``: (backend, drivers, largest size for this backend).
    Returns {"xadd": [Series], "xrange": [Series]}.
    """
    res: dict = {"xadd": [], "xrange": []}
    key = b"grow"
    for b, drivers, cap in groups:
        b.flush()
        sx = {d.name: Series(d.name) for d in drivers}
        sr = {d.name: Series(d.name) for d in drivers}
        cur = 1
        for size in sizes:
            if size > cap:
                break
            t0 = time.perf_counter()
            b.fill(key, cur, size + 1, 8)
            cur = size + 1
            fill_s = time.perf_counter() - t0
            starts = random_starts(1, size - 100, seed=size)
            k = max(200, min(size // 5, 50_000))
            msg = []
            for d in drivers:
                try:
                    us_r = _cost_us(lambda n, off, d=d, s=starts: d.xrange(key, s, n, off),
                                    k, reps, budget)  # fmt: skip
                    us_x = _cost_us(lambda n, off, d=d: d.xadd(key, 8, n, off), k, reps, budget)
                    sx[d.name].points.append((size, us_x))
                    sr[d.name].points.append((size, us_r))
                    msg.append(f"{d.name} XADD {us_x:.2f} µs, XRANGE {us_r:.1f} µs")
                except Exception as e:
                    sx[d.name].note = sr[d.name].note = f"{type(e).__name__}: {e}"[:120]
            log(f"  stream {size:>10,} entries (fill {fill_s:.1f}s): " + " | ".join(msg))
        res["xadd"] += sx.values()
        res["xrange"] += sr.values()
        b.flush()
    return res


#: IDMP-MAXSIZE in the producer scaling: every producer is filled to it before timing
#: (small, so that the fill of 10^4 producers stays short).
PRODUCER_IIDS = 20

PEL_METRICS = ("nackclaim", "xpending", "xpending-range", "readack")


def pel_scaling(
    groups: list[tuple[Backend, list[Driver], int]],
    sizes: list[int],
    reps: int,
    budget: float,
    log: Callable[[str], None],
) -> dict:
    """Cost of PEL operations as the PEL grows; returns {metric: [Series]}."""
    res: dict = {m: [] for m in PEL_METRICS}
    key, g = b"pel", b"g"
    for b, drivers, cap in groups:
        cycles = 10 if b.family == "fakeredis" else 40  # readack cycles per rep and driver
        series = {m: {d.name: Series(d.name) for d in drivers} for m in PEL_METRICS}
        for size in sizes:
            if size > cap:
                break
            b.flush()
            gc.collect()
            spare = (cycles * (reps + 1) + 2) * 100 * len(drivers)
            t0 = time.perf_counter()
            b.fill(key, 1, size + spare + 1, 8)
            b.group_create(key, g)
            b.read_all(key, g, b"c1", size)
            fill_s = time.perf_counter() - t0
            starts = random_starts(1, size - 100, seed=size)
            state = {"held": first_ids(100)}
            k = max(200, min(size // 5, 20_000))
            msg = []
            for d in drivers:
                ra_state: dict = {}
                runs = {
                    "xpending": lambda n, off, d=d: d.xpending(key, g, n),
                    "xpending-range": lambda n, off, d=d, s=starts: d.xpending_range(
                        key, g, s, n, off
                    ),
                    "nackclaim": lambda n, off, d=d, s=state: d.nackclaim(key, g, n, s),
                    "readack": lambda n, off, d=d, s=ra_state: d.readack(key, g, b"c2", n, s),
                }
                for m in PEL_METRICS:
                    s = series[m][d.name]
                    if m == "nackclaim" and not {"xnack", "claim"} <= d.caps:
                        s.note = d.na_reason("xnack")
                        continue
                    kk = cycles if m == "readack" else k
                    try:
                        us = _cost_us(runs[m], kk, reps, budget)
                        s.points.append((size, us))
                        msg.append(f"{d.name} {m} {us:.1f}")
                    except Exception as e:
                        s.note = f"{type(e).__name__}: {e}"[:120]
            log(f"  PEL {size:>10,} pending (fill {fill_s:.1f}s): " + " | ".join(msg) + " µs")
        for m in PEL_METRICS:
            res[m] += series[m].values()
        b.flush()
    return res


def producer_scaling(
    groups: list[tuple[Backend, list[Driver], int]],
    counts: list[int],
    reps: int,
    budget: float,
    log: Callable[[str], None],
) -> list[Series]:
    """XADD IDMP cost as the number of producers grows (each holding IDMP-MAXSIZE IIDs)."""
    out = []
    key = b"prod"
    maxsize = PRODUCER_IIDS
    for b, drivers, cap in groups:
        series = {d.name: Series(d.name) for d in drivers}
        for p in counts:
            if p > cap:
                break
            b.flush()
            b.raw(b"XADD", key, b"*", b"f", b"init")
            b.raw(b"XCFGSET", key, b"IDMP-MAXSIZE", b"%d" % maxsize)
            t0 = time.perf_counter()
            b.fill_auto(key, 0, p * maxsize, 8, "idmp", p)  # every producer holds maxsize IIDs
            fill_s = time.perf_counter() - t0
            pids = [b"p%d" % j for j in range(p)]
            k = max(1000, min(p * 10, 50_000))
            msg = []
            for d in drivers:
                state = {"off": p * maxsize}

                def run(n, off, d=d, state=state, pids=pids):
                    d.xadd(key, 8, n, state["off"], "idmp", pids)
                    state["off"] += n

                us = _cost_us(run, k, reps, budget)
                series[d.name].points.append((p, us))
                msg.append(f"{d.name} {us:.2f} µs")
            tracked = _info_field(b, key, b"pids-tracked")
            log(f"  {p:>8,} producers ({tracked} tracked, fill {fill_s:.1f}s): " + " | ".join(msg))
        out += series.values()
        b.flush()
    return out


def _info_field(b: Backend, key: bytes, name: bytes) -> Any:
    try:
        info = b.raw(b"XINFO", b"STREAM", key)
    except Exception:
        return "?"
    if isinstance(info, dict):
        return info.get(name, info.get(name.decode(), "?"))
    for i in range(0, len(info) - 1, 2):
        if info[i] in (name, name.decode()):
            return info[i + 1]
    return "?"


# ---------------------------------------------------------------------------------------
# redis-benchmark: the server's own ceiling
# ---------------------------------------------------------------------------------------


def redis_benchmark_path() -> Optional[str]:
    return shutil.which("redis-benchmark")


def redis_benchmark(
    server: RedisServerBackend, n_single: int, n_pipe: int, log: Callable[[str], None]
) -> list[dict]:
    """XADD and XRANGE throughput measured by redis-benchmark itself (C client).

    Two settings: 1 connection without pipelining (comparable to one command per round
    trip) and 50 connections with pipelines of 100 (the server's ceiling).
    """
    exe = redis_benchmark_path()
    if not exe:
        return []
    rows = []
    cmds: list[tuple[str, list[str], list[str], str]] = []
    for size in (8, 64, 512):
        cmds.append((f"xadd-{size}", [], ["XADD", "rb:x", "*", "f", "0" * size], "rb:x"))
    cmds.append(("xrange", [], ["XRANGE", READ_KEY.decode(), "-", "+", "COUNT", "100"], ""))
    labels = {
        "xadd-8": "XADD 8 B", "xadd-64": "XADD 64 B", "xadd-512": "XADD 512 B",
        "xrange": "XRANGE - + COUNT 100 (always the first 100)",
        "xadd-64r": "XADD 64 B (random value)", "idmp-64r": "XADD IDMP p1 <random iid> 64 B",
        "idmpauto-64r": "XADD IDMPAUTO p1 64 B (random value)",
    }  # fmt: skip
    if "idmp" in server.caps:
        tail = "0" * 52 + "__rand_int__"  # 64 bytes, random: unique content and IIDs
        cmds += [
            ("xadd-64r", ["-r", "1000000000"], ["XADD", "rb:x", "*", "f", tail], "rb:x"),
            ("idmp-64r", ["-r", "1000000000"],
             ["XADD", "rb:i", "IDMP", "p1", "__rand_int__", "*", "f", "0" * 64], "rb:i"),
            ("idmpauto-64r", ["-r", "1000000000"],
             ["XADD", "rb:a", "IDMPAUTO", "p1", "*", "f", tail], "rb:a"),
        ]  # fmt: skip
    for c, pipe, n in ((1, 1, n_single), (50, 100, n_pipe)):
        for key, opts, cmd, cleanup in cmds:
            n_cmd = max(1000, n // 20) if key == "xrange" else n  # 100 entries per reply
            if cleanup:
                server.raw("DEL", cleanup)
                if key.startswith("idmp"):
                    server.raw("XADD", cleanup, "*", "f", "init")
                    server.raw("XCFGSET", cleanup, "IDMP-MAXSIZE", "10000")
            args = [exe, "-h", "127.0.0.1", "-p", str(server.port), "-n", str(n_cmd),
                    "-c", str(c), "-P", str(pipe), "--csv", *opts, *cmd]  # fmt: skip
            try:
                out = subprocess.run(args, capture_output=True, text=True, timeout=300).stdout
                rps = float(out.strip().splitlines()[-1].split(",")[1].strip('"'))
            except Exception as e:  # pragma: no cover - depends on the tool
                print(f"redis-benchmark failed: {e}", file=sys.stderr)
                continue
            rows.append({"key": key, "c": c, "P": pipe, "n": n_cmd, "rps": rps,
                         "cmd": labels[key]})  # fmt: skip
            log(f"  redis-benchmark -c {c} -P {pipe}: {labels[key]:<44} {fmt_rate(rps)} ops/s")
            if cleanup:
                server.raw("DEL", cleanup)
    return rows


__all__ = [
    "Cell",
    "Context",
    "Series",
    "Workload",
    "fmt_rate",
    "pel_scaling",
    "producer_scaling",
    "redis_benchmark",
    "redis_benchmark_path",
    "run_table",
    "stream_scaling",
    "time_ops",
    "values",
    "workloads",
]
