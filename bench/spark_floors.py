"""Where the Spark dedup's time goes: its plan's floors against the real call, in turns.

    [XSTREAMS_BENCH_ARROW_CHECKS=1] python bench/spark_floors.py [--rounds N] [--rows N]

On ``bench_spark.py``'s session and input (local[2], 4 shuffle partitions, 2,000,000
events + 10% re-sent), one untimed round and then ``N`` rounds (default 11) in turns of:

- ``row_number``: Spark's flag, the target of issue 12;
- ``floor text+flag (streamed)``: ``repartition(pid)`` + a ``mapInArrow`` that appends a
  constant entry ID text and a constant flag to each batch as it comes: dedup's plan and
  output without the dedup;
- ``floor text+flag (collected)``: the same after holding the whole partition, as dedup
  must (every row of a producer before any answer);
- ``floor longs+flag``: the ID as two ``long`` columns instead of the text;
- ``floor flag``: the flag alone (the ``row_number`` flag's output shape);
- ``dedup``: ``xstreams.spark.dedup``, its default answer (the flag: the ``row_number``
  flag's output shape);
- ``dedup columns=[entry_id, duplicate]``: with the reply's entry ID as text.

Each line: the median wall clock, the medians of the Spark JVM's CPU seconds and of its
Python workers', and the ``row_number`` flag's time over this one's. The differences
between lines say what each part costs: holding the partition (collected against
streamed), the kernel (dedup against collected), a text column out of the worker (text
against longs). ``XSTREAMS_BENCH_ARROW_CHECKS=1`` keeps Arrow Java's bounds checks on, as
in Spark's default JVM (``bench_spark.py`` turns them off otherwise).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable, List, Tuple

from bench_spark import (  # bench/ is on sys.path (script dir)
    NOW,
    _events,
    _proc_children,
    _proc_table,
    _spark,
    _subtree_ticks,
)


def _split_cpu() -> Tuple[float, float]:
    """CPU seconds so far of the Spark JVM (this process's ``java`` child) and of the
    processes under it (the Python workers, running and reaped), from ``/proc``."""
    table = _proc_table()
    kids = _proc_children(table)
    java = next(p for p in kids.get(os.getpid(), []) if table[p][1] == "java")
    workers = table[java][3] + _subtree_ticks(table, kids, kids.get(java, []))
    tick = os.sysconf("SC_CLK_TCK")
    return table[java][2] / tick, workers / tick


def _contenders(df: Any) -> List[Tuple[str, Callable[[], None]]]:
    import xstreams.spark as xs
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, LongType, StructField, StructType

    def noop(d: Any) -> None:
        d.write.format("noop").mode("overwrite").save()

    text = xs.dedup(df, producer="pid", iid="iid", time="ts",
                    columns=["entry_id", "duplicate"]).schema  # fmt: skip
    flag = StructType([*df.schema.fields, StructField("duplicate", BooleanType(), False)])
    longs = StructType(
        [
            *df.schema.fields,
            StructField("entry_ms", LongType(), False),
            StructField("entry_seq", LongType(), False),
            StructField("duplicate", BooleanType(), False),
        ]
    )

    schemas = {"text": text, "longs": longs, "flag": flag}

    def appender(kind: str, collect: bool) -> Callable[[Any], Any]:
        names = schemas[kind].fieldNames()

        def fn(batches: Any) -> Any:  # nested: cloudpickle sends it by value
            import pyarrow as pa

            def out(b: Any) -> Any:  # only this kind's columns: no work for the others
                n = b.num_rows
                if kind == "text":
                    extra = [pa.repeat(pa.scalar(f"{NOW}-0"), n)]
                elif kind == "longs":
                    extra = [pa.repeat(pa.scalar(NOW), n), pa.repeat(pa.scalar(0), n)]
                else:
                    extra = []
                dup = pa.repeat(pa.scalar(False), n)
                return pa.RecordBatch.from_arrays([*b.columns, *extra, dup], names=names)

            if collect:
                batches = [b for b in batches if b.num_rows]
            for b in batches:
                yield out(b)

        return fn

    def floor(kind: str, collect: bool = False) -> Callable[[], None]:
        fn = appender(kind, collect)
        return lambda: noop(df.repartition("pid").mapInArrow(fn, schemas[kind]))

    def row_number() -> None:
        w = Window.partitionBy("pid", "iid").orderBy("ts")
        noop(df.withColumn("duplicate", F.row_number().over(w) > 1))

    def dedup(columns: Any = None) -> Callable[[], None]:
        def run() -> None:
            noop(xs.dedup(df, producer="pid", iid="iid", time="ts", duration=2,
                          maxsize=10_000, columns=columns))  # fmt: skip

        return run

    return [
        ("row_number", row_number),
        ("floor text+flag (streamed)", floor("text")),
        ("floor text+flag (collected)", floor("text", collect=True)),
        ("floor longs+flag", floor("longs")),
        ("floor flag", floor("flag")),
        ("dedup", dedup()),
        ("dedup columns=[entry_id, duplicate]", dedup(["entry_id", "duplicate"])),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--rows", type=int, default=2_000_000)
    args = ap.parse_args()
    spark = _spark()
    df, rows = _events(spark, args.rows)
    contenders = _contenders(df)
    for _, fn in contenders:  # the untimed round: code generation, workers, caches
        fn()
    wall: List[List[float]] = [[] for _ in contenders]
    jvm: List[List[float]] = [[] for _ in contenders]
    py: List[List[float]] = [[] for _ in contenders]
    for _ in range(args.rounds):
        for i, (_, fn) in enumerate(contenders):
            j0, p0 = _split_cpu()
            t0 = time.perf_counter()
            fn()
            wall[i].append(time.perf_counter() - t0)
            j1, p1 = _split_cpu()
            jvm[i].append(j1 - j0)
            py[i].append(p1 - p0)
    checks = "on" if os.environ.get("XSTREAMS_BENCH_ARROW_CHECKS") == "1" else "off"
    print(f"{rows:,} rows, medians of {args.rounds} rounds, Arrow bounds checks {checks}")
    flag = statistics.median(wall[0])
    width = max(len(name) for name, _ in contenders)
    for i, (name, _) in enumerate(contenders):
        w = statistics.median(wall[i])
        print(
            f"{name:{width}s} {w:6.3f} s  JVM CPU {statistics.median(jvm[i]):5.2f} s  "
            f"workers CPU {statistics.median(py[i]):5.2f} s  {flag / w:4.2f}x row_number"
        )
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
