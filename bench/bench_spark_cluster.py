#!/usr/bin/env python
"""The Spark source and sink on a standalone cluster, measured in one run.

    python bench/bench_spark_cluster.py [--quick] [--only sink,source,split] [--rows N]

Starts (and stops) on 127.0.0.1: a standalone Spark master and worker (2 cores, two
executors of one core, each a JVM of its own: ``tests/cluster_support.py``), a 3-master
Redis Cluster and one redis-server from ``XSTREAMS_REDIS_SERVER`` (8.8). Each query runs
in a driver process of its own (this script with ``--child``), so that the driver's peak
memory is its own: the driver's RSS is sampled every 50 ms over its process tree (the
Python client, the driver JVM and the Python workers the driver starts; the executors are
the worker's children, not the driver's).

* ``sink``: a streaming query reading a store directory of N rows (``--rows``, 2,000,000)
  whose ``t`` field spreads them over 64 streams (``events:{t<k>}``), written
  (a) by the ``xstreams`` sink from the executors into the Redis Cluster
  (``keyColumn``), micro-batches of 200,000 rows and of all N rows in one, against
  (b) the driver-side commit of the sink before it (``spark_sink_baseline._DriverCommit``):
  a ``foreachBatch`` that collects each micro-batch to the driver and writes it with its
  marker in one MULTI/EXEC over one connection into one redis-server. Rows/s from the
  query's start to its last batch; the driver's peak RSS.
* ``source``: the Redis Cluster holding N entries over 16 streams read by the source in
  consumer-group mode (``group``/``consumer``, two consumers) into ``noop``.
* ``split``: one stream of N entries in one redis-server read into ``noop`` with
  ``minPartitions`` 2 (ID-range parts, one per executor core) against 1 (one task for
  the stream, today's read).

Rows: ``bench``, ``method``, ``rows``, ``seconds``, ``rows_per_s``, ``note`` (printed as
a table, and as JSON with ``--json FILE``). A query that fails (an option this tree's
source or sink does not have yet) is a row with its error in the note, not a figure.
The machine may be shared: compare figures of one run with each other.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

N_FULL = 2_000_000
N_QUICK = 100_000
SINK_STREAMS = 64
SOURCE_STREAMS = 16


# ------------------------------------------------------------------ the driver process


def child(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """Run one query on the cluster; return its timings."""
    from spark_support import get_spark

    spark = get_spark(cfg["conf"])
    reader = spark.readStream.format("xstreams")
    for k, v in cfg["source"].items():
        reader = reader.option(k, v)
    df = reader.load()
    if cfg.get("select"):
        df = df.selectExpr(*cfg["select"])
    if cfg["sink"] == "noop":
        w = df.writeStream.format("noop")
    elif cfg["sink"] == "foreachBatch":
        from spark_sink_baseline import _DriverCommit  # bench/ is on the path (script dir)

        w = df.writeStream.foreachBatch(_DriverCommit(cfg["url"]))
    else:
        w = df.writeStream.format("xstreams")
        for k, v in cfg["sink"].items():
            w = w.option(k, v)
    t0 = time.monotonic()
    q = (
        w.option("checkpointLocation", cfg["checkpoint"])
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    done = 0
    deadline = t0 + cfg.get("timeout", 1200)
    try:
        while done < cfg["rows"]:
            if not q.isActive:
                raise RuntimeError(f"the query stopped: {q.exception()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out with {done} of {cfg['rows']} rows")
            time.sleep(0.05)
            done = sum(p["numInputRows"] for p in q.recentProgress)
        seconds = time.monotonic() - t0
        progress = [p for p in q.recentProgress if p["numInputRows"]]
    finally:
        q.stop()
        spark.stop()
    inside = sum(p["durationMs"]["triggerExecution"] for p in progress) / 1000
    return {"seconds": seconds, "inside": inside, "batches": len(progress), "rows": done}


# ------------------------------------------------------------------ the parent's side


def _tree(pid: int) -> List[int]:
    kids: Dict[int, List[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_driver(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """``cfg`` in a driver process of its own, its process tree's peak RSS sampled."""
    out = tempfile.NamedTemporaryFile(prefix="xstreams-bench-", suffix=".json", delete=False)
    out.close()
    log = open(out.name + ".log", "wb")
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--child", json.dumps(cfg), out.name],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=tempfile.gettempdir(),
    )
    log.close()
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], sum(_rss(p) for p in _tree(proc.pid)))
            time.sleep(0.05)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    proc.wait()
    t.join()
    try:
        with open(out.name) as f:
            res = json.load(f)
    except (OSError, ValueError):
        with open(out.name + ".log", "rb") as f:
            tail = f.read().decode(errors="replace")
        lines = [x for x in tail.splitlines() if "Error" in x or "error" in x]
        res = {"error": (lines[-1] if lines else tail[-300:]).strip()[:300]}
    for p in (out.name, out.name + ".log"):
        try:
            os.unlink(p)
        except OSError:
            pass
    res["peak_rss"] = peak[0]
    return res


def fill_store(path: str, n: int) -> None:
    """A store directory of ``n`` entries ``n <i> t <i % 64>`` in stream ``in``."""
    import pyarrow as pa
    import xstreams

    st = xstreams.Store(path, fsync="no")
    step = 200_000
    for lo in range(0, n, step):
        idx = pa.array(range(lo, min(n, lo + step)), pa.int64())
        t = pa.compute.cast(pa.compute.bit_wise_and(idx, 63), pa.int64())
        st.xadd_batch("in", pa.table({"n": idx, "t": t}))
    st.compact()
    st.close()


def fill_redis(client: Any, keys: List[str], n: int) -> None:
    """``n`` entries ``n <i>`` spread over ``keys`` in turns, pipelined."""
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        pipe.execute_command("XADD", keys[i % len(keys)], "*", "n", i)
        if i % 10_000 == 9_999:
            pipe.execute()
    pipe.execute()


def cluster_client(rc: Any) -> Any:
    from redis.cluster import RedisCluster

    return RedisCluster(host="127.0.0.1", port=rc.ports[0])


def flush(rc: Any) -> None:
    from redis.cluster import RedisCluster

    c = cluster_client(rc)
    c.flushall(target_nodes=RedisCluster.PRIMARIES)
    c.close()


def row(bench: str, method: str, res: Dict[str, Any], note: str = "") -> Dict[str, Any]:
    if "error" in res:
        return {
            "bench": bench,
            "method": method,
            "rows": 0,
            "seconds": 0.0,
            "rows_per_s": 0.0,
            "peak_rss": res.get("peak_rss", 0),
            "note": f"NOT MEASURED: {res['error']}",
        }
    rate = res["rows"] / res["seconds"]
    extra = (
        f"{res['batches']} batches, {res['rows'] / max(res['inside'], 1e-9):,.0f}/s inside "
        f"them; driver peak RSS {res['peak_rss'] / 2**20:,.0f} MiB"
    )
    return {
        "bench": bench,
        "method": method,
        "rows": res["rows"],
        "seconds": res["seconds"],
        "rows_per_s": rate,
        "peak_rss": res["peak_rss"],
        "note": f"{note}; {extra}" if note else extra,
    }


def ratio(a: Dict[str, Any], b: Dict[str, Any]) -> str:
    if not a["rows_per_s"] or not b["rows_per_s"]:
        return "ratio not measured"
    return f"{a['rows_per_s'] / b['rows_per_s']:.2f}x {b['method']}"


def bench_sink(sc: Any, rc: Any, single_url: str, n: int, base: str) -> List[Dict[str, Any]]:
    import redis

    src = os.path.join(base, "sink-src")
    fill_store(src, n)
    small = max(n // 10, 1)
    select = ["concat('events:{t', fields['t'], '}') AS k", "fields['n'] AS n"]
    rows = []
    results = {}
    for name, target, cap in [
        ("exec", "cluster", small),
        ("driver", "single", small),
        ("exec-one", "cluster", n),
    ]:
        flush(rc)
        single = redis.Redis.from_url(single_url)
        single.flushall()
        cfg = {
            "conf": sc.session_conf(f"bench-sink-{name}"),
            "rows": n,
            "source": {"path": src, "stream": "in", "maxEntriesPerTrigger": cap},
            "select": select,
            "checkpoint": os.path.join(base, f"ck-sink-{name}"),
        }
        if target == "cluster":
            cfg["sink"] = {"url": rc.url, "keyColumn": "k"}
        else:
            cfg["sink"], cfg["url"] = "foreachBatch", single_url
        res = run_driver(cfg)
        if "error" not in res:
            if target == "cluster":
                c = cluster_client(rc)
                written = sum(c.xlen(f"events:{{t{k}}}") for k in range(SINK_STREAMS))
                c.close()
            else:
                written = sum(single.xlen(f"events:{{t{k}}}") for k in range(SINK_STREAMS))
            if written != n:
                res = {"error": f"{written} entries written of {n}", "peak_rss": res["peak_rss"]}
        single.close()
        results[name] = res
    a = row("sink", f"executors -> Redis Cluster, {small:,}/batch", results["exec"])
    b = row("sink", f"driver MULTI/EXEC -> redis-server, {small:,}/batch", results["driver"])
    c = row("sink", f"executors -> Redis Cluster, {n:,} in one batch", results["exec-one"])
    a["note"] = f"{ratio(a, b)}; {a['note']}"
    if a["peak_rss"] and c["peak_rss"] and "error" not in results["exec-one"]:
        c["note"] = (
            f"driver peak RSS {c['peak_rss'] / a['peak_rss']:.2f}x the {small:,}/batch run; "
        )
        c["note"] += row("sink", "", results["exec-one"])["note"]
    rows += [a, b, c]
    return rows


def bench_source(sc: Any, rc: Any, n: int, base: str) -> List[Dict[str, Any]]:
    keys = [f"src:{{s{k}}}" for k in range(SOURCE_STREAMS)]
    flush(rc)
    c = cluster_client(rc)
    fill_redis(c, keys, n)
    c.close()
    cfg = {
        "conf": sc.session_conf("bench-source-group"),
        "rows": n,
        "source": {
            "url": rc.url,
            "streams": json.dumps(keys),
            "group": "g",
            "consumer": "c",
            "consumers": 2,
        },  # fmt: skip
        "sink": "noop",
        "checkpoint": os.path.join(base, "ck-source"),
    }
    res = run_driver(cfg)
    r = row("source", f"Redis Cluster, group, {SOURCE_STREAMS} streams -> noop", res)
    if r["rows_per_s"]:
        r["note"] = (
            f"target 500,000/s: {'met' if r['rows_per_s'] >= 5e5 else 'missed'}; " + r["note"]
        )
    flush(rc)
    return [r]


def bench_split(sc: Any, single_url: str, n: int, base: str) -> List[Dict[str, Any]]:
    import redis

    r = redis.Redis.from_url(single_url)
    r.flushall()
    fill_redis(r, ["one"], n)
    out = []
    for parts in (2, 1):
        cfg = {
            "conf": sc.session_conf(f"bench-split-{parts}"),
            "rows": n,
            "source": {"url": single_url, "stream": "one", "minPartitions": parts},
            "sink": "noop",
            "checkpoint": os.path.join(base, f"ck-split-{parts}"),
        }
        out.append(
            row("split", f"one stream, redis-server, minPartitions={parts}", run_driver(cfg))
        )
    out[0]["note"] = f"{ratio(out[0], out[1])}; {out[0]['note']}"
    r.flushall()
    r.close()
    return out


def format_table(rows: List[Dict[str, Any]]) -> str:
    out = [
        "| bench  | method                                             |      rows |  seconds |"
        "      rows/s | note",
        "|--------|----------------------------------------------------|-----------|----------|"
        "-------------|------",
    ]
    for r in rows:
        out.append(
            f"| {r['bench']:<6} | {r['method']:<50} | {r['rows']:>9} | {r['seconds']:>8.3f} |"
            f" {r['rows_per_s']:>11,.0f} | {r['note']}"
        )
    return "\n".join(out)


def run(quick: bool = True, rows: int = 0, only: str = "sink,source,split") -> List[Dict[str, Any]]:
    """The chosen benchmarks on a standalone cluster, Redis Cluster and redis-server
    started (and stopped) here."""
    from cluster_support import SparkStandalone
    from redis_cluster_support import RedisCluster3, RedisProcess

    n = rows or (N_QUICK if quick else N_FULL)
    chosen = set(only.split(","))
    base = tempfile.mkdtemp(prefix="xstreams-bench-cluster-")
    out: List[Dict[str, Any]] = []
    try:
        with SparkStandalone() as sc, RedisCluster3() as rc, RedisProcess() as single:
            single_url = f"redis://127.0.0.1:{single.port}"
            if "sink" in chosen:
                out += bench_sink(sc, rc, single_url, n, base)
            if "source" in chosen:
                out += bench_source(sc, rc, n, base)
            if "split" in chosen:
                out += bench_split(sc, single_url, n, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"{N_QUICK:,} rows")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--only", default="sink,source,split")
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        res = child(json.loads(args.child[0]))
        with open(args.child[1], "w") as f:
            json.dump(res, f)
        return
    # SIGTERM unwinds like an exception, so every server started here is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t0 = time.time()
    rows = run(args.quick, args.rows or 0, args.only)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t0))}, {time.time() - t0:.0f} s, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
