"""The Spark dedup's Rust kernel alone, outside Spark, in CPU time: for comparing wheels.

    python bench/dedup_kernel.py [ROWS] [--shuffled] [--columns=duplicate,...]
                                 [--content] [--worker] [--shared-times] [--order]
                                 [--float-order] [--cold]

One call of the dedup kernel on a partition (``_xstreams._Dedup(...).partition``, what
``xstreams.spark.dedup`` runs once per Spark partition) on ROWS rows (default 550,000: one
of the four partitions of ``bench_spark.py``'s 2,200,000) of the same data as that bench:
1,000 producers, every 10th event re-sent 1 to 4 s later, 2 s window, 10,000 IIDs per
producer, in batches of 10,000 rows (Spark's ``maxRecordsPerBatch``). The rows come in
time order as Spark's shuffle hands them over, or with ``--shuffled`` in a random order.
The call asks for dedup's two default answer columns, or for the ones ``--columns`` names
(``--columns=`` for none). ``--content``: IDMPAUTO over the ``iid`` and ``amount`` columns
(the bench's ``content=`` row) instead of the ``iid`` column. ``--worker``: the whole
function a Spark task runs (``xstreams.spark._DedupPartition``, whichever paths it takes),
for comparing wheels whose kernels differ. ``--shared-times``: times in whole minutes, so
that about 20 rows of each producer share each time and the ties decide their order;
``--order``: ties by an integer order column instead of the IID (or the content columns);
``--float-order``: by a float64 one. ``--cold``: 16 calls, each after a 0.1 s pause, their
median shown as well: the caches and the allocator's pages are no longer the last call's,
as for a Spark task (whose kernel costs about the cold figure). Each figure is the best of
8 (16) calls in ``time.process_time()`` (CPU time of this process: preemption by other
processes does not count), so two wheels run one after the other on a shared machine
compare fairly."""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import pyarrow as pa
from xstreams import _xstreams

NOW = 1_700_000_000_000
DEFAULT = ("entry_id", "duplicate")  # dedup's default answer columns


def partition(rows: int, shuffled: bool, shared_times: bool = False) -> list:
    base = np.arange(int(rows / 1.1), dtype=np.int64)
    resent = base[base % 10 == 0]
    ids = np.concatenate([base, resent])
    ts = np.concatenate([NOW + base * 3, NOW + resent * 3 + 1000 + (resent % 1000) % 3000])
    if shared_times:  # times in whole 60 s steps: about 20 rows of a producer share each
        ts = ts - (ts - NOW) % 60_000
    if shuffled:
        perm = np.random.default_rng(1).permutation(len(ids))
        ids, ts = ids[perm], ts[perm]
    table = pa.table(
        {
            "pid": pa.array(np.char.add("p", (ids % 1000).astype(str))),
            "iid": pa.array(np.char.add("e", ids.astype(str))),
            "ts": pa.array(ts),
            "amount": pa.array(ids % 1000),
            "ord": pa.array((ids * 7919) % 1009),
            "ford": pa.array(((ids * 7919) % 1009) / 7.0),
        }
    )
    return table.to_batches(max_chunksize=10_000)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = int(args[0]) if args else 550_000
    batches = partition(rows, "--shuffled" in sys.argv, "--shared-times" in sys.argv)
    chosen = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--columns=")]
    columns = [c for c in chosen[-1].split(",") if c] if chosen else list(DEFAULT)
    n = sum(b.num_rows for b in batches)
    content = ["iid", "amount"] if "--content" in sys.argv else None
    iid = None if content else "iid"
    ties = ["ord"] if "--order" in sys.argv else (content or ["iid"])
    ties = ["ford"] if "--float-order" in sys.argv else ties

    def kernel() -> list:  # the output batches too: the kernel makes them on demand
        order = None if ties in (["iid"], content) else ties[0]
        dedup = _xstreams._Dedup(
            producer="pid", iid=iid, content=content, time="ts", order=order,
            duration=2, maxsize=10_000, carry=False,
        )  # fmt: skip
        return list(dedup.partition(batches, False, False, columns))

    def worker() -> list:
        import xstreams.spark as xs

        fn = xs._DedupPartition("pid", iid, content, "ts", ties, 2, 10_000, False, "all", columns)
        return list(fn(iter(batches)))

    call = worker if "--worker" in sys.argv else kernel
    cold = "--cold" in sys.argv
    took = []
    for _ in range(16 if cold else 8):
        if cold:
            time.sleep(0.1)
        t0 = time.process_time()
        out = call()
        took.append(time.process_time() - t0)
        assert out is not None and sum(b.num_rows for b in out) == n
        del out
    best = min(took)
    order = "shuffled" if "--shuffled" in sys.argv else "time order"
    order += ", times shared" if "--shared-times" in sys.argv else ""
    order += ", ties by an order column" if "--order" in sys.argv else ""
    order += ", ties by a float order column" if "--float-order" in sys.argv else ""
    order += ", cold" if cold else ""
    median = f" (median {statistics.median(took) * 1e3:.1f} ms)" if cold else ""
    print(
        f"{n} rows ({order}), {'IDMPAUTO over ' + str(content) if content else 'IID mode'}, "
        f"{'worker' if call is worker else 'kernel'}, columns {columns}: "
        f"{best * 1e3:.1f} ms CPU per call{median}, "
        f"{n / best / 1e6:.2f}M rows/s"
    )


if __name__ == "__main__":
    main()
