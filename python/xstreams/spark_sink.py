"""``df.writeStream.format("xstreams")`` and ``df.write.format("xstreams")``: each row one
``XADD`` to ``stream``, or to the stream its ``keyColumn`` names (with ``IDMP <producer>
<iid>`` when those columns are given).

The rows never pass through the driver: each task writes its own rows, and its commit
message says only what it wrote.

* ``url`` (a server or a Redis Cluster): each task writes its rows straight to the
  target, per hash slot one ``MULTI``/``EXEC`` holding its XADDs for that slot and a
  marker of (query, slot, task partition) in the same slot, under ``WATCH`` of the
  marker (``spark_sink_redis``). A re-run task (a retry, a zombie, a batch Spark re-runs
  after a restart) finds its marker and skips; a marker of the batch with other rows
  means Spark re-partitioned the re-run batch, and the task fails rather than write
  them twice.
* ``path`` (a durable store, one writer per directory): each task stages its rows as an
  Arrow IPC file under the store directory; the driver's commit appends the staged files
  of the batch (reading files, not results) with the query's marker in one atomic block
  of the store's log, then flushes it (``spark_sink_store``). The store stays open (its
  write lock held) in the driver-side Python worker that runs the commits until
  ``holdStore`` seconds (default 10) pass without a commit.

The argument for exactly once, and what holds when Spark re-partitions a re-run batch:
``docs/spark.md``, "Running on a cluster".
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Iterator, List, Mapping, Optional, Tuple

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from . import spark_sink_store as staged
from .spark_io import (
    RowShape,
    as_text,
    bad_option,
    get_option,
    int_option,
    key_values,
    marker_key,
    stream_parts,
    target,
)

_HOLD_S = 10.0  # default of option("holdStore")
_BATCH_MARKER_TTL_MS = 7 * 86400 * 1000  # a batch write's markers (url): a week


class SinkMessage(WriterCommitMessage):
    """What a task reports: its partition, its rows, and either the (slot, key) groups it
    held (``url``: written, or found written) or its staged file (``path``). Nothing of
    the rows themselves."""

    def __init__(
        self,
        partition: int,
        rows: int,
        query: str = "",
        written: Optional[List[Tuple[int, Optional[bytes]]]] = None,
        skipped: int = 0,
        staged_file: Optional[str] = None,
    ) -> None:
        self.partition = partition
        self.rows = rows
        self.query = query
        self.written = written or []
        self.skipped = skipped
        self.staged_file = staged_file


class _Sink:
    def __init__(self, options: Mapping[str, Any], schema: StructType, overwrite: bool) -> None:
        from .spark_io import stream_keys

        if overwrite:
            raise ValueError(
                'xstreams: the sink appends entries; mode("overwrite") is not supported '
                "(delete the stream first, then append)"
            )
        self.options = dict(options)
        self.path, self.url = target(options)
        self.key_column = get_option(options, "keyColumn")
        if self.key_column is not None:
            if get_option(options, "stream") is not None or get_option(options, "streams"):
                raise bad_option("keyColumn", 'and option("stream") are both set: give one')
            self.stream: Optional[str] = None
        else:
            keys = stream_keys(options)
            if len(keys) != 1:
                raise ValueError(
                    'xstreams: the sink writes one stream: give option("stream", <key>) or '
                    'option("keyColumn", <column>)'
                )
            self.stream = keys[0]
        self.shape = RowShape(options, [f.name for f in schema.fields])
        self.db = int_option(options, "db", 0, 0) or 0
        self.fsync = str(get_option(options, "fsync", "everysec"))
        if self.fsync not in ("always", "everysec", "no"):
            raise bad_option("fsync", f"must be always, everysec or no, got {self.fsync!r}")
        hold = get_option(options, "holdStore", _HOLD_S)
        try:
            self.hold = float(str(hold).strip())
        except ValueError:
            raise bad_option("holdStore", f"must be a number of seconds, got {hold!r}") from None
        if not self.hold >= 0:
            raise bad_option("holdStore", f"must be >= 0 seconds, got {hold!r}")
        # Tests only: the task's Python worker dies after writing this many slot groups
        # (url) or after staging its file (path), on its first attempt only, to prove
        # that a retry or a restart writes every row once.
        self.die_after = int_option(options, "testDieAfterGroups", None, 1)

    # ------------------------------------------------------------------ task side

    def _task_write(
        self, batches: Iterator[Any], job: str, batch: int, ttl: Optional[int]
    ) -> SinkMessage:
        """Write this task's rows (the executor side of both sinks)."""
        from pyspark import TaskContext

        tc = TaskContext.get()
        part = tc.partitionId() if tc is not None else 0
        attempt = tc.attemptNumber() if tc is not None else 0
        table = _table([b for b in batches if b.num_rows])
        rows = 0 if table is None else table.num_rows
        if table is None:
            return SinkMessage(part, 0, job)
        if self.path is not None:
            if self.key_column is not None:
                key_values(table, self.key_column)  # a null or empty key: refused here
            f = staged.stage(self.path, job, batch, part, attempt, table)
            if self.die_after is not None and attempt == 0:
                os._exit(17)  # tests: the worker dies with its file staged, unreported
            return SinkMessage(part, rows, job, staged_file=f)
        from .spark_conn import task_client
        from .spark_sink_redis import TaskWrite

        parts = stream_parts(table, self.key_column, self.stream)
        with task_client(self.options) as client:
            w = TaskWrite(client, self.shape, job, batch, part, ttl,
                          self.die_after if attempt == 0 else None)  # fmt: skip
            w.run(parts)
        return SinkMessage(part, rows, job, written=w.groups, skipped=w.skipped)

    # ---------------------------------------------------------------- driver side

    def _check_url(self, got: List[SinkMessage], job: str, batch: int, partitions: int) -> None:
        from .spark_conn import connect
        from .spark_sink_redis import check_partitions

        written = {m.partition: m.written for m in got if m.written}
        if not written:
            return
        client = connect(self.options)
        try:
            check_partitions(client, job, batch, written, partitions)
        finally:
            client.close()

    def _append(self, store: Any, table: Any, after: Optional[List[bytes]] = None) -> None:
        """Append every row of ``table`` (None: no rows) to its stream of ``store``, then
        run ``after`` (the marker's XADD), as one atomic block of the store's log. Typed
        columns go through one ``Store.xadd_batch`` call (the typed XADD path in Rust, no
        Python per row); a ``fields`` map column through per-row commands. A row that fails
        raises after the rest (and ``after``) ran."""
        import pyarrow.compute as pc

        kw = self.shape.xadd_batch_kwargs()
        if table is None or table.num_rows == 0:
            if after is not None:
                self._check(store.execute_many([after], db=self.db, atomic=True))
            return
        if kw is None:
            cmds: List[List[bytes]] = []
            for key, rows in stream_parts(table, self.key_column, self.stream):
                for b in rows.to_batches(max_chunksize=20_000):
                    cmds.extend(self.shape.commands(key, b))
            if after is not None:
                cmds.append(after)
            self._check(store.execute_many(cmds, db=self.db, atomic=True))
            return
        if self.key_column is not None:
            key_values(table, self.key_column)  # a null or empty key: refused first
        res = store.xadd_batch(
            self.stream,
            table,
            errors="return",
            db=self.db,
            atomic=True,
            after=None if after is None else [after],
            **kw,
        )
        errors = res.column("error")
        if errors.null_count != len(errors):
            row = pc.index(pc.is_valid(errors), True).as_py()
            raise ValueError(f"xstreams sink: XADD of row {row} failed: {errors[row].as_py()}")

    def _check(self, replies: List[Any]) -> None:
        for i, r in enumerate(replies):
            if isinstance(r, Exception):
                raise ValueError(f"xstreams sink: XADD of row {i} failed: {r}")


def _table(batches: List[Any]) -> Any:
    import pyarrow as pa

    if not batches:
        return None
    return pa.Table.from_batches(batches)


def _marker_batch(reply: Any) -> int:
    """The batch id a marker stream's last entry holds (-1: none)."""
    if not reply:
        return -1
    fv = reply[0][1]
    if isinstance(fv, dict):
        fv = [x for kv in fv.items() for x in kv]
    d = {as_text(k): as_text(v) for k, v in zip(fv[::2], fv[1::2])}
    return int(d.get("batch", -1))


def _query_and_batch() -> Tuple[str, int]:
    from pyspark import TaskContext

    tc = TaskContext.get()
    query = (tc.getLocalProperty("sql.streaming.queryId") or "") if tc else ""
    batch = (tc.getLocalProperty("streaming.sql.batchId") or "") if tc else ""
    if not query or not batch:
        raise ValueError(
            "xstreams sink: the task has no streaming query id or batch id "
            "(Spark's sql.streaming.queryId / streaming.sql.batchId local properties)"
        )
    return query, int(batch)


class StreamWriter(_Sink, DataSourceStreamArrowWriter):
    """The streaming sink (see the module doc)."""

    def write(self, iterator: Iterator[Any]) -> SinkMessage:
        query, batch = _query_and_batch()
        return self._task_write(iterator, query, batch, None)

    def commit(self, messages: List[Optional[SinkMessage]], batchId: int) -> None:
        got = sorted((m for m in messages if m is not None), key=lambda m: m.partition)
        query = next((m.query for m in got if m.query), "")
        if self.url is not None:
            self._check_url(got, query, batchId, len(messages))
            return
        if not query:
            return  # no task of the batch had a row
        marker = marker_key(query, self.stream or f"\0keyColumn:{self.key_column}")
        mark = [b"XADD", marker.encode(), b"MAXLEN", b"1", b"*", b"batch", str(batchId).encode(),
                b"query", query.encode()]  # fmt: skip
        if self.stream is not None:
            mark += [b"stream", self.stream.encode()]
        with staged.held_store(self.path, self.fsync, self.hold) as store:  # type: ignore[arg-type]
            done = _marker_batch(
                store.execute_command("XREVRANGE", marker, "+", "-", "COUNT", 1, db=self.db)
            )
            if done < batchId:
                table = staged.read_staged([m.staged_file for m in got if m.staged_file])
                self._append(store, table, mark)
                del table
                if self.fsync == "everysec":
                    store.flush()  # the batch is on disk before Spark logs it as committed
        # else: written before a restart: Spark re-ran the batch
        staged.remove_batches(self.path, query, batchId)  # type: ignore[arg-type]

    def abort(self, messages: List[Optional[SinkMessage]], batchId: int) -> None:
        return None  # staged files of an aborted batch go with the next commit


class BatchWriter(_Sink, DataSourceArrowWriter):
    """``df.write.format("xstreams")``: appends. Task retries add nothing (the markers of
    this write, or staged files); running the write again appends again (give IDMP
    options to make that add nothing)."""

    def __init__(self, options: Mapping[str, Any], schema: StructType, overwrite: bool) -> None:
        super().__init__(options, schema, overwrite)
        self.job = f"write:{uuid.uuid4()}"  # made on the driver: one id for every task

    def write(self, iterator: Iterator[Any]) -> SinkMessage:
        return self._task_write(iterator, self.job, 0, _BATCH_MARKER_TTL_MS)

    def commit(self, messages: List[Optional[SinkMessage]]) -> None:
        got = sorted((m for m in messages if m is not None), key=lambda m: m.partition)
        if self.path is None:
            return
        try:
            table = staged.read_staged([m.staged_file for m in got if m.staged_file])
            store = staged.open_store(self.path, self.fsync)
            try:
                self._append(store, table)
            finally:
                store.close()
        finally:
            staged.remove_batches(self.path, self.job, None)

    def abort(self, messages: List[Optional[SinkMessage]]) -> None:
        if self.path is not None:
            staged.remove_batches(self.path, self.job, None)


__all__ = ["StreamWriter", "BatchWriter", "SinkMessage"]
