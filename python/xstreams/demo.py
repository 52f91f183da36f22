"""A tour of xstreams on the embedded default store: ``python -m xstreams.demo``.

It appends events, reads them back, trims the stream, consumes it with a consumer group
(including a failure released with XNACK and re-delivered with XREADGROUP CLAIM), and
shows idempotent producers (XADD IDMP) swallowing a retried write. Every step prints the
command and what the store answered.
"""

from __future__ import annotations

import sys
from typing import Any

import xstreams


def _show(label: str, value: Any) -> None:
    print(f"  {label:<44} -> {value!r}")


def main(argv: list[str] | None = None) -> int:
    r = xstreams.Redis(decode_responses=True)  # the process-wide default store
    r.flushall()
    print(f"xstreams {xstreams.__version__}: Redis 8.8 streams, in-process\n")

    print("1. append")
    ids = [
        r.xadd("orders", {"item": item, "qty": qty})
        for item, qty in [("apple", 3), ("pear", 1), ("plum", 7), ("fig", 2), ("kiwi", 5)]
    ]
    for i in ids:
        _show("XADD orders * item ... qty ...", i)
    _show("XLEN orders", r.xlen("orders"))

    print("\n2. read")
    _show("XRANGE orders - + COUNT 2", r.xrange("orders", count=2))
    _show("XREVRANGE orders + - COUNT 1", r.xrevrange("orders", count=1))
    _show("XREAD COUNT 2 STREAMS orders <2nd id>", r.xread({"orders": ids[1]}, count=2))

    print("\n3. trim")
    _show("XTRIM orders MAXLEN 4", r.xtrim("orders", maxlen=4, approximate=False))
    _show("XLEN orders", r.xlen("orders"))
    first = r.xrange("orders", count=1)[0][0]
    _show("first entry left", first)

    print("\n4. consume with a group")
    _show("XGROUP CREATE orders shipping 0", r.xgroup_create("orders", "shipping", id="0"))
    batch = r.xreadgroup("shipping", "worker-1", {"orders": ">"}, count=3)
    _show("XREADGROUP ... worker-1 COUNT 3 >", [e[0] for e in batch[0][1]])
    done, failed = batch[0][1][0][0], batch[0][1][1][0]
    _show(f"XACK orders shipping {done}", r.xack("orders", "shipping", done))
    _show(
        f"XNACK orders shipping FAIL IDS 1 {failed}", r.xnack("orders", "shipping", "FAIL", failed)
    )
    _show("XPENDING orders shipping", r.xpending("orders", "shipping"))
    again = r.xreadgroup(
        "shipping", "worker-2", {"orders": ">"}, count=1, claim_min_idle_time=60_000
    )
    entry = again[0][1][0]
    _show("XREADGROUP ... worker-2 CLAIM 60000 COUNT 1 >", entry[0])
    _show("  re-delivered NACKed entry first; deliveries", entry[3])

    print("\n5. idempotent producers")
    a = r.xadd("payments", {"amount": "10"}, idmp=("gateway-1", "tx-42"))
    b = r.xadd("payments", {"amount": "10"}, idmp=("gateway-1", "tx-42"))
    _show("XADD payments IDMP gateway-1 tx-42 * ...", a)
    _show("same XADD retried", b)
    info = r.xinfo_stream("payments")
    _show("XLEN payments", r.xlen("payments"))
    _show(
        "XINFO STREAM iids-added / iids-duplicates", (info["iids-added"], info["iids-duplicates"])
    )

    print("\nAll done: the default store lives as long as this process.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
