"""Memory per entry and per tracked IID.

In-process peers (xstreams, burner-redis, fakeredis) are measured in a fresh child
process each: RSS (``/proc/self/statm``) after the store exists, then after adding the
entries; tracemalloc would not see the Rust allocations. redis-server is measured by the
``used_memory`` delta of ``INFO memory`` (and its RSS delta) for the same entries.

Run as a script, this file is the child: ``python bench_memory.py '<json spec>'`` prints
one JSON line.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = os.sysconf("SC_PAGE_SIZE")
KEY = b"mem"


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def _prepare(b: Any, spec: dict) -> None:
    """Create the stream and, for IDMP modes, its IDMP configuration."""
    b.fill_auto(KEY, 0, 1, spec["size"], "plain")
    if spec["mode"] != "plain" and "xcfgset" in b.caps:
        b.raw(b"XCFGSET", KEY, b"IDMP-MAXSIZE", b"%d" % spec["maxsize"])


def _xinfo(b: Any) -> dict:
    try:
        info = b.raw(b"XINFO", b"STREAM", KEY)
    except Exception:
        return {}
    if isinstance(info, dict):
        return {(k.decode() if isinstance(k, bytes) else k): v for k, v in info.items()}
    return {
        (info[i].decode() if isinstance(info[i], bytes) else info[i]): info[i + 1]
        for i in range(0, len(info) - 1, 2)
    }


def child(spec: dict) -> dict:
    """Measure in this (fresh) process; ``spec``: peer, mode, size, n, pids, maxsize."""
    from bench_peers import BurnerBackend, FakeRedisBackend, XStreamsBackend, value_of

    peer = spec["peer"]
    b: Any
    if peer == "xstreams":
        b = XStreamsBackend()
    elif peer == "burner":
        b = BurnerBackend()
    else:
        b = FakeRedisBackend()
    _prepare(b, spec)
    # allocate what the fill loop allocates once (batch lists, values) before the baseline
    scratch = [(b"XADD", KEY, b"*", b"f", value_of(i, spec["size"])) for i in range(1000)]
    del scratch
    gc.collect()
    before = rss()
    b.fill_auto(KEY, 1, spec["n"] + 1, spec["size"], spec["mode"], spec["pids"])
    gc.collect()
    after = rss()
    info = _xinfo(b) if peer != "burner" else {}
    return {
        "rss_before": before,
        "rss_after": after,
        "delta": after - before,
        "length": info.get("length"),
        "iids_tracked": info.get("iids-tracked"),
        "pids_tracked": info.get("pids-tracked"),
    }


def measure_child(spec: dict, timeout: float = 1800) -> dict:
    """Run :func:`child` in a fresh interpreter (same Python, same sys.path)."""
    cmd = [sys.executable, os.path.join(HERE, "bench_memory.py"), json.dumps(spec)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed")
    return json.loads(p.stdout.strip().splitlines()[-1])


def measure_server(b: Any, spec: dict) -> dict:
    """The same measurement on a redis-server backend: ``used_memory`` and RSS deltas."""
    b.flush()
    _prepare(b, spec)
    um0, rss0 = b.used_memory()
    b.fill_auto(KEY, 1, spec["n"] + 1, spec["size"], spec["mode"], spec["pids"])
    um1, rss1 = b.used_memory()
    info = _xinfo(b)
    b.flush()
    return {
        "delta": um1 - um0,
        "rss_delta": rss1 - rss0,
        "length": info.get("length"),
        "iids_tracked": info.get("iids-tracked"),
        "pids_tracked": info.get("pids-tracked"),
    }


def spec(peer: str, mode: str, size: int, n: int, pids: int = 1, maxsize: int = 10_000) -> dict:
    return {"peer": peer, "mode": mode, "size": size, "n": n, "pids": pids, "maxsize": maxsize}


def measure(peer: str, server: Optional[Any], s: dict) -> dict:
    if peer == "redis":
        return measure_server(server, s)
    return measure_child(s)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    print(json.dumps(child(json.loads(sys.argv[1]))))
