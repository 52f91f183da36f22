"""Spark integration: IDMP dedup over DataFrames, loading into a store, replaying a store.

    import xstreams.spark as xs

    out = xs.dedup(events, producer="pid", iid="iid", time="ts")
    xs.load(out.where(~out.duplicate), "/data/store", "events", producer="pid", iid="iid")
    df = (spark.read.format("xstreams").option("path", "/data/store")
          .option("stream", "events").option("group", "billing").load())

* :func:`dedup` answers, for every row, what ``XADD <producer> IDMP <pid> <iid> * ...``
  (or ``IDMPAUTO`` over content columns) would reply if each producer's rows were sent in
  event-time order with the server clock at the row's time: ``duplicate`` (the reply's
  ``entry_id`` and ``original_id`` on request). It partitions by producer and runs the
  engine's IDMP maps over Arrow batches (``mapInArrow``): no row goes through the driver.
  Each partition is sorted in the Python worker by Arrow, not by a Spark sort stage.
* :func:`load` appends a DataFrame to a stream of a durable store through
  ``Store.xadd_batch``, from exactly one task (a store has one writer), with IDMP options
  passed through so that re-running a failed job adds no duplicates.
* ``spark.read.format("xstreams")`` (:class:`XStreamsDataSource`) reads a persisted store
  (snapshot + logs) as a DataFrame, split into partitions by stream and ID range;
  ``readStream`` / ``write`` / ``writeStream`` with the same format are the streaming
  source (``spark_source.py``) and the sinks (``spark_sink.py``). PySpark finds the
  source by itself (``pyspark_xstreams``): :func:`register` is optional.

How each works and what it costs: ``docs/spark.md``. Executors need ``xstreams`` (and
``pyarrow``) installed in the interpreter ``PYSPARK_PYTHON`` names.
"""

from __future__ import annotations

import contextlib
import gc
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceReader
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from ._xstreams import _Dedup
from .dedup import check_settings, first_null, sort_indices
from .spark_replay import _option, _Reader

__all__ = [
    "dedup",
    "load",
    "register",
    "XStreamsDataSource",
    "DEFAULT_SCHEMA",
]

#: Columns the replay reader returns by default.
DEFAULT_SCHEMA = StructType(
    [
        StructField("stream", StringType(), False),
        StructField("id", StringType(), False),
        StructField("ms", LongType(), False),
        StructField("seq", LongType(), False),
        StructField("fields", MapType(StringType(), StringType(), True), True),
    ]
)

#: dedup's answer columns, in their one place here: each holds the reply's entry ID
#: (text) or the duplicate flag. The Rust kernel reads the same names (``Answer``).
_DEDUP_COLUMNS = {"entry_id": "id", "duplicate": "flag", "original_id": "id"}
# By default the answer a dedup asks for: the flag on every row (keep="all") or nothing
# (keep="first": every row left is a first occurrence). The reply IDs are on request:
# each string column out of the worker costs Spark a copy per row (docs/spark.md).
_DEFAULT_COLUMNS: Dict[str, List[str]] = {"all": ["duplicate"], "first": []}
_UNSET: Any = object()


def register(spark: SparkSession) -> None:
    """Register the ``xstreams`` data source with ``spark`` explicitly. Not needed where
    the workers' Python has xstreams installed: PySpark discovers ``pyspark_xstreams``."""
    spark.dataSource.register(XStreamsDataSource)


def _large_strings(df: DataFrame) -> bool:
    try:
        v = df.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")
    except Exception:  # pragma: no cover - Spark Connect without the setting
        v = "false"
    return str(v).lower() == "true"


# ---------------------------------------------------------------------------------- dedup


_DEDUP_CHUNK = 131_072  # rows per engine call: large enough to amortise, small in memory


# Whether this worker process has frozen what it held at its first dedup partition.
_FROZEN = False


@contextlib.contextmanager
def _paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off while a worker answers a partition, then
    back as it was; and in a reused Spark worker (``SPARK_REUSE_WORKER``), what it holds
    frozen once (``gc.freeze()``), so the collection PySpark runs after each task sees
    only what later tasks make. Why, and what it costs: docs/spark-speed.md."""
    global _FROZEN
    if not _FROZEN and os.environ.get("SPARK_REUSE_WORKER"):
        gc.freeze()
        _FROZEN = True
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _DedupPartition:
    """The ``mapInArrow`` function of :func:`dedup` (picklable, runs on executors).

    It takes the whole partition (every producer's rows are in one partition), sorts it
    by (producer, time, ties) itself -- Arrow's sort, no Spark sort stage -- and runs the
    engine's IDMP over the sorted rows in large chunks.
    """

    def __init__(
        self,
        producer: str,
        iid: Optional[str],
        content: Optional[List[str]],
        time: str,
        ties: List[str],
        duration: int,
        maxsize: int,
        large: bool,
        keep: str,
        columns: Sequence[str],
    ) -> None:
        self.producer = producer
        self.iid = iid
        self.content = content
        self.time = time
        self.ties = ties
        self.duration = int(duration)
        self.maxsize = int(maxsize)
        self.large = large
        self.keep = keep
        self.columns = list(columns)
        # The order column, if the ties are one (else they are the IID or the content).
        self.order = None if ties in ([iid], list(content or [])) else ties[0]

    def _refuse_nulls(self, table: Any) -> None:
        """A null producer, IID or time fails the partition (XADD refuses them), naming
        the row in the order the task received the rows: the store's own error, raised
        after the sort, would name the row's sorted place."""
        keys = [("producer", self.producer), ("IID", self.iid), ("time", self.time)]
        null = first_null(table, keys)
        if null is not None:
            role, name, row = null
            raise ValueError(
                f"dedup: the {role} column {name!r} is null on row {row} of a "
                "partition (rows counted as its task received them)"
            )

    def _sorted(self, table: Any) -> Any:
        """``table`` sorted by (producer, time, ties), nulls first, stably."""
        return table.take(sort_indices(table, (self.producer, self.time, *self.ties)))

    def _kernel(self) -> Any:
        """The dedup kernel (``xstreams.Deduper``'s) for one partition: every producer's
        rows are in it, so nothing is kept after it."""
        return _Dedup(
            producer=self.producer,
            iid=self.iid,
            content=self.content,
            time=self.time,
            order=self.order,
            duration=self.duration,
            maxsize=self.maxsize,
            carry=False,
        )

    def _unsorted(self, kernel: Any, batches: List[Any]) -> Any:
        """The kernel on the partition as it came; ``None``: input it does not take."""
        return kernel.partition(batches, self.keep == "first", self.large, self.columns)

    def _sorted_answers(self, kernel: Any, table: Any) -> Any:
        """The kernel on the sorted partition; ``None``: input it does not take."""
        batches = table.to_batches(max_chunksize=_DEDUP_CHUNK)
        return kernel.partition_sorted(batches, self.keep == "first", self.large, self.columns)

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        with _paused_gc():
            yield from self._answers(batches)

    def _answers(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        id_type = pa.large_string() if self.large else pa.string()
        # The whole partition first, then the kernel (docs/spark-speed.md).
        got: List[Any] = [b for b in batches if b.num_rows]
        kernel = self._kernel()
        # One call for the partition; the input columns pass through.
        out = self._unsorted(kernel, got)
        if out is not None:
            yield from out
            return
        # Input it does not take (nulls, other types, rows XADD refuses):
        # the paths below give the same answers and the store's errors.
        if not got:
            return
        table = pa.Table.from_batches(got)
        got.clear()  # the table holds the batches now
        self._refuse_nulls(table)
        table = self._sorted(table)
        # The sorted partition's answers in Rust: IDMPAUTO, IIDs of other types, ties
        # the first way cannot order. What it does not take runs the store below.
        out = self._sorted_answers(kernel, table)
        if out is not None:
            yield from out
            return
        types = {"id": id_type, "flag": pa.bool_()}
        # The answers are never null (a failed row raises), as the kernel's and the
        # Spark schema's fields say.
        answer_fields = [
            pa.field(c, types[_DEDUP_COLUMNS[c]], nullable=False) for c in self.columns
        ]
        schema = pa.schema([*table.schema, *answer_fields], metadata=table.schema.metadata)
        for batch in table.to_batches(max_chunksize=_DEDUP_CHUNK):
            res = kernel.store_answers(batch)
            errors = res.column("error")
            if errors.null_count != len(errors):
                row = pc.index(pc.is_valid(errors), True).as_py()
                raise ValueError(f"dedup: row {row} of a batch failed: {errors[row].as_py()}")
            ids = res.column("id")
            if ids.type != id_type:
                ids = ids.cast(id_type)
            dup = res.column("duplicate")
            if self.keep == "first":
                keep = pc.invert(dup)
                batch, ids, dup = batch.filter(keep), ids.filter(keep), dup.filter(keep)
            answer = {"id": ids, "flag": dup}
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, *(answer[_DEDUP_COLUMNS[c]] for c in self.columns)],
                schema=schema,
            )


def _answer_columns(columns: Optional[Sequence[str]], keep: str) -> List[str]:
    if columns is None:
        return list(_DEFAULT_COLUMNS[keep])
    if isinstance(columns, str):
        raise ValueError(f"columns must be a list of column names, got {columns!r}")
    out = list(columns)
    for c in out:
        if c not in _DEDUP_COLUMNS:
            raise ValueError(f"columns: {c!r} is not one of {', '.join(_DEDUP_COLUMNS)}")
    if len(set(out)) != len(out):
        raise ValueError(f"columns: a column is named twice in {out!r}")
    if not out and keep == "all":
        raise ValueError('columns: keep="all" needs at least one answer column')
    return out


def dedup(
    df: DataFrame,
    producer: str = "pid",
    iid: Optional[str] = _UNSET,
    content: Optional[Sequence[str]] = None,
    time: str = "ts",
    duration: int = 100,
    maxsize: int = 100,
    order: Optional[str] = None,
    partitions: Optional[int] = None,
    keep: str = "all",
    columns: Optional[Sequence[str]] = None,
) -> DataFrame:
    """``df`` with ``duplicate`` (bool, never null; ``entry_id`` on request); the
    producer, IID and time fields are non-null too (a null there fails).

    The answer Redis gives when each producer's rows are sent to that producer's own
    stream, in event-time order (ties by ``order``, else by ``iid``, else by the
    ``content`` columns), as ``XADD <producer> IDMP <producer> <iid> * <iid> <iid>``
    (``iid`` mode: the fields do not change the answer) or ``XADD <producer> IDMPAUTO
    <producer> * <c1> <v1> ...`` over the ``content`` columns in the given order (a null
    leaves the field out, as ``xadd_batch`` does), with the server clock pinned at the
    row's ``time`` (ms integers, timestamps or dates) and the stream's IDMP ``duration``
    (seconds) and ``maxsize``.

    ``duplicate`` is whether Redis finds the IID already there; ``entry_id`` (with
    ``columns=["entry_id", "duplicate"]``) is the reply itself: a new entry's ID, or for
    a duplicate the ID of the entry first added for that IID: the ID of the IID's first
    occurrence. Keep ``~duplicate`` rows to deduplicate. ``partitions`` sets the number
    of shuffle partitions (default: ``spark.sql.shuffle.partitions``).

    ``keep="first"``: only the rows that are not duplicates (each IID's first
    occurrence in its window), by default with no column added: the rows of
    ``dropDuplicates`` within the window.

    ``columns``: the answer columns to append, in this order, out of ``entry_id``,
    ``duplicate`` and ``original_id`` (the ``entry_id`` answer again, under the name a
    join may want; default: ``["duplicate"]``, or ``[]`` with ``keep="first"``). Each
    ID column costs Spark a string copy per row.

    Each partition (all rows of its producers) is sorted inside the Python worker by
    Arrow, not by a Spark sort stage, so a task holds its whole partition in memory:
    raise ``partitions`` for inputs larger than the executors' memory allows.
    """
    if keep not in ("all", "first"):
        raise ValueError(f'keep must be "all" or "first", got {keep!r}')
    answer = _answer_columns(columns, keep)
    if content is not None:
        if iid is not _UNSET and iid is not None:
            raise ValueError("give iid or content, not both")
        iid = None
        content = list(content)
        if not content:
            raise ValueError("content needs at least one column")
    else:
        iid = "iid" if iid is _UNSET else iid
        if iid is None:
            raise ValueError("give iid (a column) or content (columns)")
    check_settings(duration, maxsize)
    needed = [producer, time, *([iid] if iid else []), *(content or [])]
    if order is not None:
        needed.append(order)
    for c in needed:
        if c not in df.columns:
            raise ValueError(f"column {c!r} is not in the DataFrame")
    for c in answer:
        if c in df.columns:
            raise ValueError(f"the DataFrame already has a column {c!r}")
    ties = [order] if order is not None else ([iid] if iid else list(content or []))
    parted = df.repartition(partitions, producer) if partitions else df.repartition(producer)
    # original_id comes out of the worker (the entry_id array again) rather than from a
    # Spark projection after mapInArrow, which copied every output row once more
    # (docs/spark-speed.md).
    types = {"id": StringType(), "flag": BooleanType()}
    extra = [StructField(c, types[_DEDUP_COLUMNS[c]], False) for c in answer]
    # A null producer, IID or time fails the task (both worker paths refuse it), so the
    # rows out never hold one: saying so spares Spark a validity check per value.
    keys = {producer, time, *([iid] if iid else [])}
    fields = [StructField(f.name, f.dataType, False, f.metadata) if f.name in keys else f
              for f in df.schema.fields]  # fmt: skip
    schema = StructType([*fields, *extra])
    fn = _DedupPartition(
        producer, iid, content, time, ties, duration, maxsize, _large_strings(df), keep, answer
    )
    return parted.mapInArrow(fn, schema)


# ----------------------------------------------------------------------------------- load


class _LoadPartition:
    """The ``mapInArrow`` function of :func:`load`: the one task that writes."""

    def __init__(
        self, path: str, stream: Optional[str], kw: Dict[str, Any], settings: Dict[str, Any]
    ):
        self.path = path
        self.stream = stream
        self.kw = kw
        self.settings = settings
        self._checked: set = set()

    def _prepare_keys(self, store: Any, batch: Any) -> None:
        """``key_column``: check each stream the batch names the first time it shows up
        (its IDMP settings, as :meth:`_prepare` does for ``stream``)."""
        import pyarrow.compute as pc

        from .spark_io import key_values

        col = key_values(batch, self.kw["key_column"])
        for k in pc.unique(col).to_pylist():
            if k not in self._checked:
                self._prepare(store, k)
                self._checked.add(k)

    def _prepare(self, store: Any, stream: Optional[str] = None) -> None:
        stream = self.stream if stream is None else stream
        s = self.settings
        want_d, want_m = s.get("duration"), s.get("maxsize")
        exists = store.execute_command("EXISTS", stream) == 1
        if exists:
            got = store.execute_command("XIDMP", "CFGGET", stream)
            cur = dict(zip(got[::2], got[1::2]))
            cur_d, cur_m = int(cur[b"duration"]), int(cur[b"maxsize"])
            if (want_d is not None and want_d != cur_d) or (want_m is not None and want_m != cur_m):
                raise ValueError(
                    f"stream {stream!r} has IDMP duration {cur_d} s and maxsize {cur_m}; "
                    "changing them forgets its IIDs (a re-run could then add duplicates): "
                    "pass the same values or none"
                )
        else:
            cur_d = want_d or int(store.config_get("stream-idmp-duration"))
            cur_m = want_m or int(store.config_get("stream-idmp-maxsize"))
        most = s.get("max_per_producer")
        if most is not None and most > cur_m:
            raise ValueError(
                f"a producer has {most} rows but stream {stream!r} remembers {cur_m} "
                "IIDs per producer: a re-run could add duplicates. Use more producers "
                "(<= maxsize rows each), a larger idmp_maxsize (<= 10000) for a new "
                "stream, or verify_window=False"
            )
        if stream == self.stream:
            self._created_with = None if exists else (cur_d, cur_m)

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        import xstreams

        store = xstreams.Store(self.path, fsync=self.settings.get("fsync", "everysec"))
        rows = added = dups = nil = 0
        by_key = self.kw.get("key_column") is not None
        try:
            self._created_with = None
            if not by_key:
                self._prepare(store)
            else:
                # Streams of a key column may be created by any batch: the settings
                # stand for the whole load, then the old ones are put back.
                self._created_with = (
                    self.settings.get("duration") or int(store.config_get("stream-idmp-duration")),
                    self.settings.get("maxsize") or int(store.config_get("stream-idmp-maxsize")),
                )
            restore = None
            wanted = self.settings.get("duration") or self.settings.get("maxsize")
            if self._created_with is not None and wanted and self.kw.get("iid_mode"):
                # A new stream takes the IDMP settings of the store's configuration: set
                # them for the batch that creates it, then put the old ones back.
                restore = (
                    store.config_get("stream-idmp-duration"),
                    store.config_get("stream-idmp-maxsize"),
                )
                store.config_set("stream-idmp-duration", self._created_with[0])
                store.config_set("stream-idmp-maxsize", self._created_with[1])
            kw = {k: v for k, v in self.kw.items() if k != "iid_mode"}
            try:
                for batch in batches:
                    if batch.num_rows == 0:
                        continue
                    if by_key:
                        self._prepare_keys(store, batch)
                    res = store.xadd_batch(self.stream, batch, errors="return", **kw)
                    errors = res.column("error")
                    if errors.null_count != len(errors):
                        row = pc.index(pc.is_valid(errors), True).as_py()
                        raise ValueError(
                            f"load: row {row} of a batch failed: {errors[row].as_py()} "
                            "(rows before it were written; a re-run adds no duplicates)"
                        )
                    dup = res.column("duplicate")
                    n_dup = pc.sum(dup).as_py() or 0
                    n_nil = res.column("id").null_count
                    rows += batch.num_rows
                    dups += n_dup
                    nil += n_nil
                    added += batch.num_rows - n_dup - n_nil
                    if restore is not None and not by_key:
                        store.config_set("stream-idmp-duration", restore[0])
                        store.config_set("stream-idmp-maxsize", restore[1])
                        restore = None
            finally:
                if restore is not None:
                    store.config_set("stream-idmp-duration", restore[0])
                    store.config_set("stream-idmp-maxsize", restore[1])
        finally:
            store.close()
        yield pa.RecordBatch.from_pydict(
            {"rows": [rows], "added": [added], "duplicates": [dups], "nil": [nil]},
            schema=pa.schema(
                [("rows", pa.int64()), ("added", pa.int64()), ("duplicates", pa.int64()),
                 ("nil", pa.int64())]
            ),
        )  # fmt: skip


def load(
    df: DataFrame,
    path: str,
    stream: Optional[str] = None,
    *,
    key_column: Optional[str] = None,
    producer: Optional[str] = None,
    pid: Optional[str] = None,
    iid: Optional[str] = None,
    idmpauto: bool = False,
    fields: Optional[Sequence[str]] = None,
    id: Optional[str] = None,
    maxlen: Optional[int] = None,
    minid: Optional[str] = None,
    approximate: bool = True,
    limit: Optional[int] = None,
    nomkstream: bool = False,
    ref_policy: Optional[str] = None,
    idmp_duration: Optional[int] = None,
    idmp_maxsize: Optional[int] = None,
    verify_window: bool = True,
    allow_duplicates: bool = False,
    fsync: str = "everysec",
) -> Dict[str, int]:
    """Append the rows of ``df`` to ``stream`` in the durable store at ``path``.

    One task writes (``repartition(1)``): a store has one writer, which holds its lock
    for the whole load (close other writers first). Each Arrow batch goes through
    ``Store.xadd_batch`` with the given options: ``producer`` (column) or ``pid``
    (value) with ``iid`` (column) or ``idmpauto=True`` make every row an IDMP XADD, so
    re-running a failed (or finished) load adds no duplicates. That holds while the
    stream remembers the IIDs: within ``idmp_duration`` seconds (<= 86400) and at most
    ``idmp_maxsize`` (<= 10000) rows per producer; ``verify_window`` checks the second
    before writing (one aggregation over ``df``). ``idmp_duration`` / ``idmp_maxsize``
    apply to a stream the load creates; an existing stream must already have them.
    Without IDMP options the load refuses to run unless ``allow_duplicates=True``.

    ``key_column`` (instead of ``stream``): each row goes to the stream that column names
    (a null or empty key is refused before the batch holding it is written); each
    stream's rows keep their order. IDMP windows are then per stream, and
    ``verify_window`` counts rows per (key, producer).

    ``path`` must be reachable from the executors (local mode, or a shared file system).
    Returns ``{"rows", "added", "duplicates", "nil"}`` (``nil``: NOMKSTREAM on a
    missing stream).
    """
    if (stream is None) == (key_column is None):
        raise ValueError("load: give stream (a key) or key_column (a column of keys), not both")
    if key_column is not None and key_column not in df.columns:
        raise ValueError(f"load: key_column {key_column!r} is not a column of df: {df.columns}")
    has_pid = producer is not None or pid is not None
    idmp = has_pid and (iid is not None or idmpauto)
    if not idmp and not allow_duplicates:
        raise ValueError(
            "load needs IDMP options (producer= or pid=, with iid= or idmpauto=True) so that "
            "a re-run adds no duplicates; pass allow_duplicates=True to load without them"
        )
    if idmp_duration is not None or idmp_maxsize is not None:
        check_settings(idmp_duration or 100, idmp_maxsize or 100)
    most = None
    if idmp and verify_window:
        by = [c for c in (key_column, producer) if c is not None]
        if by:
            most = df.groupBy(*by).count().agg(F.max("count")).first()[0] or 0
        else:
            most = df.count()
    kw: Dict[str, Any] = {
        "fields": list(fields) if fields is not None else None,
        "id": id,
        "producer": producer,
        "pid": pid,
        "iid": iid,
        "idmpauto": idmpauto,
        "maxlen": maxlen,
        "minid": minid,
        "approximate": approximate,
        "limit": limit,
        "nomkstream": nomkstream,
        "ref_policy": ref_policy,
        "key_column": key_column,
        "iid_mode": idmp,
    }
    settings = {
        "duration": idmp_duration,
        "maxsize": idmp_maxsize,
        "max_per_producer": most,
        "fsync": fsync,
    }
    writer = _LoadPartition(os.path.abspath(path), stream, kw, settings)
    schema = "rows long, added long, duplicates long, nil long"
    out = df.repartition(1).mapInArrow(writer, schema).collect()
    total = {"rows": 0, "added": 0, "duplicates": 0, "nil": 0}
    for r in out:
        for k in total:
            total[k] += int(r[k])
    return total


class XStreamsDataSource(DataSource):
    """``spark.read.format("xstreams")``: the entries of a persisted store (or, with
    ``url``, of a live server or Redis Cluster: :mod:`xstreams.spark_batch_server`).

    Options: ``path`` (the store directory), ``stream`` (a key) or ``streams`` (a JSON
    list of keys), ``start`` / ``end`` (IDs as XRANGE takes them; default all),
    ``group`` (only the entries that group has not acknowledged: its pending entries
    that still exist, then the entries after its last-delivered ID), ``db`` (0),
    ``rowsPerPartition`` (about 500000), ``decode`` (``false``: binary fields).

    Columns: ``stream``, ``id``, ``ms``, ``seq``, ``fields`` (map of field to value). With
    ``.schema(...)``, columns other than those name fields, read as the given types
    (the last value of a field an entry repeats; a missing field is null).
    """

    @classmethod
    def name(cls) -> str:
        return "xstreams"

    def schema(self) -> StructType:
        if str(_option(self.options, "decode", "true")).lower() == "false":
            return StructType(
                [
                    StructField("stream", BinaryType(), False),
                    StructField("id", StringType(), False),
                    StructField("ms", LongType(), False),
                    StructField("seq", LongType(), False),
                    StructField("fields", MapType(BinaryType(), BinaryType(), True), True),
                ]
            )
        return DEFAULT_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        if _option(self.options, "url") is not None:
            from .spark_batch_server import ServerBatchReader

            return ServerBatchReader(self.options, schema)
        return _Reader(self.options, schema)

    def streamReader(self, schema: StructType) -> Any:
        from .spark_source import StreamReader

        return StreamReader(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        from .spark_sink import BatchWriter

        return BatchWriter(self.options, schema, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        from .spark_sink import StreamWriter

        return StreamWriter(self.options, schema, overwrite)
