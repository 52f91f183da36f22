"""``df.writeStream.format("xstreams")`` and ``df.write.format("xstreams")``: each row one
``XADD`` to ``stream`` (with ``IDMP <producer> <iid>`` when those columns are given).

Exactly once for streaming queries: the tasks of a micro-batch hand their rows (Arrow
tables) to the driver in their commit messages, and the driver's ``commit(batchId)``
appends every row of the batch together with a *marker* in one atomic step. The marker
is a stream holding one entry ``batch <id>`` (the last micro-batch written) under the
key ``xstreams:sink:<hash of the query id and stream>``; Spark's query id is kept in the
checkpoint, so it is the same after a restart. A batch the marker already covers is
skipped: a batch Spark re-runs after a kill is not written twice, however its rows are
partitioned the second time.

* ``url`` (a live server): ``WATCH`` the marker, read it, then ``MULTI``, the rows'
  ``XADD``s, the marker's ``XADD``, ``EXEC`` (retried if the marker moved meanwhile).
* ``path`` (a durable store): the commit appends the rows with one ``Store.xadd_batch``
  call (the typed XADD path in Rust; a ``fields`` map column goes through one atomic
  ``execute_many``) with the marker last, as one atomic step: one MULTI/EXEC block in
  the store's log, so a driver crash in the middle of that write leaves none of it after
  reopening (the re-run batch then writes it whole), then flushes the log to disk. The
  store stays open (and its write lock held) in the driver-side Python worker that runs
  the commits -- Spark reuses that process from one commit to the next -- until
  ``holdStore`` seconds (default 10) pass without a commit: opening a store loads it, so
  reopening it every micro-batch would cost a load of the whole stream per batch. See
  ``docs/spark.md``.

A micro-batch goes through the driver's memory once: bound it with the source's
``maxEntriesPerTrigger`` (and Spark's ``spark.driver.maxResultSize``).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from .spark_conn import connect
from .spark_io import RowShape, as_text, get_option, int_option, marker_key, target

_CHUNK = 20_000
_LOCK_WAIT_S = 30.0
_HOLD_S = 10.0  # default of option("holdStore")


class SinkMessage(WriterCommitMessage):
    """What a task reports: its partition, rows, and (``path``) its rows as a table."""

    def __init__(
        self, partition: int, rows: int, table: Any = None, query: str = "", skipped: bool = False
    ) -> None:
        self.partition = partition
        self.rows = rows
        self.table = table
        self.query = query
        self.skipped = skipped


class _Sink:
    def __init__(self, options: Mapping[str, Any], schema: StructType, overwrite: bool) -> None:
        from .spark_io import stream_keys

        if overwrite:
            raise ValueError(
                'xstreams: the sink appends entries; mode("overwrite") is not supported '
                "(delete the stream first, then append)"
            )
        self.path, self.url = target(options)
        keys = stream_keys(options)
        if len(keys) != 1:
            raise ValueError('xstreams: the sink writes one stream: give option("stream", <key>)')
        self.stream = keys[0]
        self.shape = RowShape(options, [f.name for f in schema.fields])
        self.db = int_option(options, "db", 0, 0) or 0
        self.fsync = str(get_option(options, "fsync", "everysec"))
        from .spark_io import bad_option

        if self.fsync not in ("always", "everysec", "no"):
            raise bad_option("fsync", f"must be always, everysec or no, got {self.fsync!r}")
        hold = get_option(options, "holdStore", _HOLD_S)
        try:
            self.hold = float(str(hold).strip())
        except ValueError:
            raise bad_option("holdStore", f"must be a number of seconds, got {hold!r}") from None
        if not self.hold >= 0:
            raise bad_option("holdStore", f"must be >= 0 seconds, got {hold!r}")

    def _task(self) -> Any:
        from pyspark import TaskContext

        return TaskContext.get()

    def _open_store(self) -> Any:
        """The durable store, open for writing (waits a while for another writer's lock)."""
        import xstreams

        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                return xstreams.Store(self.path, fsync=self.fsync)  # type: ignore[arg-type]
            except Exception as e:
                if "lock" not in str(e).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _commands(self, tables: List[Any]) -> Iterator[List[bytes]]:
        key = self.stream.encode()
        for t in tables:
            if t is None or t.num_rows == 0:
                continue
            for b in t.to_batches(max_chunksize=_CHUNK):
                yield from self.shape.commands(key, b)

    def _append(self, store: Any, tables: List[Any], after: Optional[List[bytes]] = None) -> None:
        """Append every row of ``tables`` to the stream of ``store``, then run ``after``
        (the marker's XADD). Typed columns go through one ``Store.xadd_batch`` call (the
        typed XADD path in Rust, no Python per row); a ``fields`` map column through
        per-row commands. A row that fails raises after the rest (and ``after``) ran."""
        tables = [t for t in tables if t is not None and t.num_rows]
        kw = self.shape.xadd_batch_kwargs()
        if kw is None:
            cmds: List[List[bytes]] = list(self._commands(tables))
            if after is not None:
                cmds.append(after)
            self._check(store.execute_many(cmds, db=self.db, atomic=True))
            return
        import pyarrow as pa
        import pyarrow.compute as pc

        failed = None
        if tables:
            table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
            # The rows and the marker are one atomic step: one block in the store's log.
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
                failed = f"xstreams sink: XADD of row {row} failed: {errors[row].as_py()}"
        elif after is not None:
            self._check(store.execute_many([after], db=self.db, atomic=True))
        if failed is not None:
            raise ValueError(failed)

    def _check(self, replies: List[Any]) -> None:
        for i, r in enumerate(replies):
            if isinstance(r, Exception):
                raise ValueError(f"xstreams sink: XADD of row {i} failed: {r}")


def _marker_batch(reply: Any) -> int:
    """The batch id a marker stream's last entry holds (-1: none)."""
    if not reply:
        return -1
    fv = reply[0][1]
    if isinstance(fv, dict):
        fv = [x for kv in fv.items() for x in kv]
    d = {as_text(k): as_text(v) for k, v in zip(fv[::2], fv[1::2])}
    return int(d.get("batch", -1))


class StreamWriter(_Sink, DataSourceStreamArrowWriter):
    """The streaming sink (see the module doc)."""

    def write(self, iterator: Iterator[Any]) -> SinkMessage:
        tc = self._task()
        batches = [b for b in iterator if b.num_rows]
        rows = sum(b.num_rows for b in batches)
        query = tc.getLocalProperty("sql.streaming.queryId") or ""
        return SinkMessage(tc.partitionId(), rows, pa_table(batches) if batches else None, query)

    def commit(self, messages: List[Optional[SinkMessage]], batchId: int) -> None:
        got = sorted((m for m in messages if m is not None), key=lambda m: m.partition)
        query = next((m.query for m in got if m.query), "")
        tables = [m.table for m in got if m.table is not None]
        marker = marker_key(query, self.stream)
        mark = [b"XADD", marker.encode(), b"MAXLEN", b"1", b"*", b"batch", str(batchId).encode(),
                b"query", query.encode(), b"stream", self.stream.encode()]  # fmt: skip
        if self.url is not None:
            self._commit_url(tables, marker, mark, batchId)
            return
        with _held_store(self) as store:
            done = _marker_batch(
                store.execute_command("XREVRANGE", marker, "+", "-", "COUNT", 1, db=self.db)
            )
            if done >= batchId:
                return  # written before a restart: Spark re-ran the batch
            self._append(store, tables, mark)
            if self.fsync == "everysec":
                store.flush()  # the batch is on disk before Spark logs it as committed

    def _commit_url(self, tables: List[Any], marker: str, mark: List[bytes], batch_id: int) -> None:
        import redis

        r = connect(self.url)  # type: ignore[arg-type]
        try:
            with r.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        pipe.watch(marker)
                        got = pipe.execute_command("XREVRANGE", marker, "+", "-", "COUNT", 1)
                        if _marker_batch(got) >= batch_id:
                            pipe.unwatch()
                            return  # written before a restart: Spark re-ran the batch
                        pipe.multi()
                        for argv in self._commands(tables):
                            pipe.execute_command(*argv)
                        pipe.execute_command(*mark)
                        self._check(pipe.execute(raise_on_error=False))
                        return
                    except redis.WatchError:
                        continue  # another commit of this query moved the marker: look again
        finally:
            r.close()

    def abort(self, messages: List[Optional[SinkMessage]], batchId: int) -> None:
        return None


# The store the streaming sink's commits write to, kept open between commits in the
# process that runs them (see the module doc): {"key", "dir", "store", "timer"}.
_HELD: Dict[str, Any] = {}
_HELD_LOCK = threading.Lock()


def _dir_id(path: str) -> Any:
    """What tells a store directory from a new one made at the same path."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _release_held() -> None:
    """Close the held store (flushes the log, releases the lock). Call with the lock."""
    timer = _HELD.pop("timer", None)
    if timer is not None:
        timer.cancel()
    store = _HELD.pop("store", None)
    _HELD.clear()
    if store is not None:
        store.close()


def _expire_held(timer: Any) -> None:
    with _HELD_LOCK:
        if _HELD.get("timer") is timer:
            _HELD.pop("timer")
            _release_held()


@contextlib.contextmanager
def _held_store(sink: _Sink) -> Iterator[Any]:
    """The store at ``sink.path``, open for writing, for one commit: the one held since
    the last commit if it is the same store, else newly opened. After the commit it stays
    open for ``sink.hold`` seconds; a commit that raised closes it (the next one reopens
    the store from its files)."""
    with _HELD_LOCK:
        key = (sink.path, sink.fsync)
        store = _HELD.get("store")
        if store is not None and (
            _HELD.get("key") != key or store.closed or _HELD.get("dir") != _dir_id(sink.path)
        ):
            _release_held()
            store = None
        timer = _HELD.pop("timer", None)
        if timer is not None:
            timer.cancel()
        if store is None:
            store = sink._open_store()
            _HELD.update(key=key, dir=_dir_id(sink.path), store=store)
        ok = False
        try:
            yield store
            ok = True
        finally:
            if not ok or sink.hold <= 0:
                _release_held()
            else:
                t = threading.Timer(sink.hold, lambda: _expire_held(t))
                t.daemon = True
                _HELD["timer"] = t
                t.start()


def pa_table(batches: List[Any]) -> Any:
    import pyarrow as pa

    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)


class BatchWriter(_Sink, DataSourceArrowWriter):
    """``df.write.format("xstreams")``: appends; no marker (use IDMP options to make a
    re-run add nothing)."""

    def write(self, iterator: Iterator[Any]) -> SinkMessage:
        tc = self._task()
        part = tc.partitionId() if tc is not None else 0
        batches = [b for b in iterator if b.num_rows]
        rows = sum(b.num_rows for b in batches)
        if self.path is not None:
            return SinkMessage(part, rows, pa_table(batches) if batches else None)
        r = connect(self.url)  # type: ignore[arg-type]
        try:
            pipe = r.pipeline(transaction=False)
            n = 0
            for argv in self._commands([pa_table(batches)] if batches else []):
                pipe.execute_command(*argv)
                n += 1
                if n % _CHUNK == 0:
                    self._check(pipe.execute(raise_on_error=False))
            self._check(pipe.execute(raise_on_error=False))
        finally:
            r.close()
        return SinkMessage(part, rows)

    def commit(self, messages: List[Optional[SinkMessage]]) -> None:
        if self.path is None:
            return
        got = sorted((m for m in messages if m is not None), key=lambda m: m.partition)
        tables = [m.table for m in got if m.table is not None]
        store = self._open_store()
        try:
            self._append(store, tables)
        finally:
            store.close()

    def abort(self, messages: List[Optional[SinkMessage]]) -> None:
        return None


__all__ = ["StreamWriter", "BatchWriter", "SinkMessage"]
