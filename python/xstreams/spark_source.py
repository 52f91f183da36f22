"""``spark.readStream.format("xstreams")``: the entries of Redis streams as a stream.

Offsets are JSON objects ``{stream: last ID read}``; a micro-batch reads, for each
stream, the entries with IDs in ``(start, end]``.

* ``path``: a durable store directory, opened read-only (no lock: a writer keeps
  running beside it). The driver finds each stream's last ID, and with
  ``maxEntriesPerTrigger`` where a batch ends, from the snapshot's node index when no log
  after the snapshot touches the streams (a batch then ends at a node's last ID: up to a
  node's entries under the cap), else with a read-only open; the executors read their ID
  ranges straight from the store's files (the batch reader's plan: snapshot node ranges
  and log tails, split by stream and ID range).
* ``url``: a live server (``xstreams serve`` or redis-server >= 7): XRANGE by ID range,
  one partition per stream.
* ``url`` with ``group``/``consumer``: the driver delivers new entries to the consumer
  with ``XREADGROUP ... >`` when it plans a batch; the executors read the batch's entries
  back from the consumer's pending list (``XREADGROUP`` with an ID: history), so a
  re-run batch reads the same entries; ``commit(end)`` (after Spark checkpointed the
  batch) acknowledges them with ``XACK``. A restarted query reads its consumer's pending
  entries first. See ``docs/spark.md`` for what can repeat.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from .spark_conn import connect
from .spark_io import (
    ZERO_ID,
    as_text,
    bad_option,
    bool_option,
    get_option,
    id_max,
    id_text,
    int_option,
    min_partitions,
    parse_id,
    per_stream_parts,
    stream_keys,
    target,
)

_READ_CHUNK = 10_000


class _UrlPartition(InputPartition):
    def __init__(self, index: int, stream: str, start: str, end: str) -> None:
        super().__init__(index)
        self.stream = stream
        self.start = start
        self.end = end


def _water_fill(avail: List[int], cap: int) -> List[int]:
    """Share ``cap`` entries over streams with ``avail`` entries each, evenly."""
    take = [0] * len(avail)
    left = cap
    open_ = [i for i, a in enumerate(avail) if a > 0]
    while left > 0 and open_:
        share = max(1, left // len(open_))
        nxt = []
        for i in open_:
            if left == 0:
                break
            t = min(share, avail[i] - take[i], left)
            take[i] += t
            left -= t
            if take[i] < avail[i]:
                nxt.append(i)
        open_ = nxt
    return take


class StreamReader(DataSourceStreamReader):
    """The streaming reader of the ``xstreams`` source (see the module doc)."""

    def __init__(self, options: Mapping[str, Any], schema: StructType) -> None:
        from .spark import _field_schema

        self.path, self.url = target(options)
        self.conn_options = dict(options)
        self.streams = stream_keys(options)
        self.db = int_option(options, "db", 0, 0) or 0
        self.max_entries = int_option(options, "maxEntriesPerTrigger", None, 1)
        self.rows_per_part = int_option(options, "rowsPerPartition", 500_000, 1)
        self.min_parts = min_partitions(options)
        self.decode = bool_option(options, "decode", True)
        self.schema = schema
        self.field_schema = _field_schema(schema)
        start = str(get_option(options, "startingId", "0")).strip()
        if start not in ("0", "$"):
            parse_id(start, "startingId")
        self.starting = start
        self.group = get_option(options, "group")
        self.consumer = get_option(options, "consumer")
        if (self.group is None) != (self.consumer is None):
            missing = "consumer" if self.consumer is None else "group"
            raise bad_option(missing, 'is needed too: a group read takes "group" and "consumer"')
        if self.group is not None and self.url is None:
            raise bad_option(
                "group",
                'needs option("url"): a store directory is read-only for this source '
                "(its batch reader reads a group's unacknowledged entries instead)",
            )
        if self.url is not None and self.db:
            raise bad_option("db", 'is given in the URL for option("url") (redis://host:port/db)')
        self._client: Any = None
        if self.group is not None:
            self._create_groups()

    def __getstate__(self) -> Dict[str, Any]:
        # Executors get the reader pickled: without the driver's connection.
        state = dict(self.__dict__)
        state["_client"] = None
        return state

    # ------------------------------------------------------------------------ helpers

    def _redis(self) -> Any:
        if self._client is None:
            self._client = connect(self.conn_options)
        return self._client

    def _create_groups(self) -> None:
        import redis

        r = self._redis()
        at = "0" if self.starting == "0" else self.starting
        for s in self.streams:
            try:
                r.execute_command("XGROUP", "CREATE", s, self.group, at, "MKSTREAM")
            except redis.ResponseError as e:
                if "BUSYGROUP" not in str(e):
                    raise

    def _last_ids(self) -> Dict[str, str]:
        """Each stream's last entry ID now (``0-0`` for a missing or empty stream)."""
        out = {}
        if self.path is not None:
            fast = self._last_ids_from_index()
            if fast is not None:
                return fast
            import xstreams

            store = xstreams.Store(self.path, read_only=True)
            try:
                for s in self.streams:
                    got = store.execute_command("XREVRANGE", s, "+", "-", "COUNT", 1, db=self.db)
                    out[s] = as_text(got[0][0]) if got else ZERO_ID
            finally:
                store.close()
        else:
            r = self._redis()
            for s in self.streams:
                got = r.execute_command("XREVRANGE", s, "+", "-", "COUNT", 1)
                out[s] = as_text(got[0][0]) if got else ZERO_ID
        return out

    def _last_ids_from_index(self) -> Optional[Dict[str, str]]:
        """Each stream's last ID from the snapshot's node index, without loading the
        store, when the logs after the snapshot do not touch the streams (a compacted
        store); else None. A node's last ID may be an entry deleted since: as an offset
        it bounds the same entries, and every later entry has a greater ID."""
        from xstreams import _xstreams

        _, plan = _xstreams._replay_plan(self.path, [s.encode() for s in self.streams], db=self.db)
        if any(p[1] != "snapshot" for p in plan):
            return None
        out = {s: ZERO_ID for s in self.streams}
        for key, _kind, _start, end, _rows in plan:  # a stream's parts come in ID order
            out[key.decode()] = end
        return out

    def _node_ends(self, stream: str, start: str) -> Optional[List[Tuple[str, int]]]:
        """For each snapshot node holding entries after ``start``: its last ID and the
        entries up to it (the node holding ``start`` counted whole: an upper bound), from
        the snapshot's node index without loading the store; None when the logs after the
        snapshot touch the stream."""
        from xstreams import _xstreams

        _, plan = _xstreams._replay_plan(
            self.path, [stream.encode()], start=f"({start}", db=self.db, rows_per_part=1
        )
        out = []
        acc = 0
        for _key, kind, _start, last, rows in plan:  # one part per node, in ID order
            if kind != "snapshot":
                return None
            acc += rows
            out.append((last, acc))
        return out

    def _capped_at_nodes(self, start: Dict[str, str], cap: int) -> Optional[Dict[str, str]]:
        """The end offsets of a batch of at most ``cap`` entries, ending each stream at a
        snapshot node's last ID (so up to a node's entries under the cap), from the node
        index alone (which also bounds each stream: no separate look for its last ID): a
        batch of a compacted store is planned without loading it. None (the caller counts
        entry by entry) when a log touches a stream or a stream's share is smaller than
        its first node."""
        ends = []
        for s in self.streams:
            e = self._node_ends(s, start[s])
            if e is None:
                return None
            ends.append(e)
        take = _water_fill([e[-1][1] if e else 0 for e in ends], cap)
        out = {}
        for s, e, t in zip(self.streams, ends, take):
            fit = [last for last, upto in e if upto <= t]
            if t and not fit:
                return None
            out[s] = fit[-1] if fit else start[s]
        return out

    def _ids_after(self, stream: str, start: str, count: int, store: Any) -> List[str]:
        """The IDs of up to ``count`` entries after ``start``."""
        if store is not None:
            import pyarrow as pa

            b = store.xrange_arrow(
                stream, f"({start}", "+", count=count, db=self.db, schema=pa.schema([])
            )
            return b.column("id").to_pylist()
        got = self._redis().execute_command("XRANGE", stream, f"({start}", "+", "COUNT", count)
        return [as_text(e[0]) for e in got]

    # ------------------------------------------------------------------------ offsets

    def initialOffset(self) -> Dict[str, str]:
        if self.group is not None:
            # The consumer's pending entries first: everything after 0-0 it holds.
            return {s: ZERO_ID for s in self.streams}
        if self.starting == "$":
            return self._last_ids()
        at = ZERO_ID if self.starting == "0" else id_text(parse_id(self.starting))
        return {s: at for s in self.streams}

    def getDefaultReadLimit(self) -> Any:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        if self.max_entries is None:
            return ReadAllAvailable()
        return ReadMaxRows(self.max_entries)

    def latestOffset(self, start: Dict[str, str], limit: Any = None) -> Dict[str, str]:
        from pyspark.sql.streaming.datasource import ReadMaxRows

        start = {s: start.get(s, ZERO_ID) for s in self.streams}
        cap = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        if self.group is not None:
            return self._group_latest(start, cap)
        if cap is not None and self.path is not None:
            at_nodes = self._capped_at_nodes(start, cap)
            if at_nodes is not None:
                return at_nodes
        last = self._last_ids()
        end = {s: id_max(start[s], last[s]) for s in self.streams}
        if cap is None:
            return end
        store = None
        if self.path is not None:
            import xstreams

            store = xstreams.Store(self.path, read_only=True)
        try:
            ids = [
                self._ids_after(s, start[s], cap, store) if end[s] != start[s] else []
                for s in self.streams
            ]
        finally:
            if store is not None:
                store.close()
        take = _water_fill([len(x) for x in ids], cap)
        return {
            s: (ids[i][take[i] - 1] if take[i] else start[s]) for i, s in enumerate(self.streams)
        }

    def _group_latest(self, start: Dict[str, str], cap: Optional[int]) -> Dict[str, str]:
        """Deliver entries to the consumer (pending ones first) and return the last IDs."""
        r = self._redis()
        left = cap
        end = dict(start)
        for s in self.streams:
            if left is not None and left <= 0:
                break
            # What the consumer already holds after start (a batch planned, not logged).
            count = left if left is not None else 1 << 30
            pend = r.execute_command(
                "XPENDING", s, self.group, f"({start[s]}", "+", count, self.consumer
            )
            if pend:
                end[s] = id_max(end[s], as_text(pend[-1][0]))
                if left is not None:
                    left -= len(pend)
            while left is None or left > 0:
                n = _READ_CHUNK if left is None else min(left, _READ_CHUNK)
                got = r.execute_command(
                    "XREADGROUP", "GROUP", self.group, self.consumer, "COUNT", n,
                    "STREAMS", s, ">",
                )  # fmt: skip
                entries = _group_reply_entries(got, s)
                if not entries:
                    break
                end[s] = id_max(end[s], as_text(entries[-1][0]))
                if left is not None:
                    left -= len(entries)
                if len(entries) < n:
                    break
        return end

    def partitions(self, start: Dict[str, str], end: Dict[str, str]) -> List[InputPartition]:
        live = [
            s
            for s in self.streams
            if parse_id(end.get(s, ZERO_ID)) > parse_id(start.get(s, ZERO_ID))
        ]
        if self.path is None:
            return [_UrlPartition(i, s, start.get(s, ZERO_ID), end[s]) for i, s in enumerate(live)]
        from xstreams import _xstreams

        from .spark import _ReplayPartition

        parts: List[InputPartition] = []
        min_parts = per_stream_parts(self.min_parts, len(live))
        for s in live:
            files, plan = _xstreams._replay_plan(
                self.path,
                [s.encode()],
                start=f"({start.get(s, ZERO_ID)}",
                end=end[s],
                db=self.db,
                rows_per_part=self.rows_per_part,
                min_parts=min_parts,
            )
            for p in plan:
                parts.append(_ReplayPartition(len(parts), files, p))
        return parts

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, _UrlPartition):
            yield from self._read_url(partition)
            return
        from .spark import _read_replay_part

        yield from _read_replay_part(
            partition, None, self.db, self.decode, self.field_schema, self.schema
        )

    def _read_url(self, part: _UrlPartition) -> Iterator[Any]:
        r = connect(self.conn_options)
        end = parse_id(part.end)
        cur = part.start
        try:
            while True:
                if self.group is not None:
                    got = r.execute_command(
                        "XREADGROUP", "GROUP", self.group, self.consumer, "COUNT", _READ_CHUNK,
                        "STREAMS", part.stream, cur,
                    )  # fmt: skip
                    entries = _group_reply_entries(got, part.stream)
                else:
                    entries = r.execute_command(
                        "XRANGE", part.stream, f"({cur}", part.end, "COUNT", _READ_CHUNK
                    )
                keep = [e for e in entries if parse_id(as_text(e[0])) <= end]
                if keep:
                    yield self._batch(part.stream, keep)
                if len(keep) < len(entries) or len(entries) < _READ_CHUNK or not entries:
                    break
                cur = as_text(entries[-1][0])
        finally:
            r.close()

    def _batch(self, stream: str, entries: List[Tuple[Any, Any]]) -> Any:
        """Entries from a server as a RecordBatch of the source's schema."""
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        ids = [as_text(e[0]) for e in entries]
        pairs = [parse_id(i) for i in ids]
        maps: List[Optional[List[Tuple[Any, Any]]]] = []
        for _, fv in entries:
            if fv is None:
                maps.append(None)
                continue
            if isinstance(fv, dict):
                fv = [x for kv in fv.items() for x in kv]
            row = list(zip(fv[::2], fv[1::2]))
            if self.decode:
                row = [(k.decode(), v.decode()) for k, v in row]
            maps.append(row)
        target_schema = to_arrow_schema(self.schema)
        cols = []
        key = stream if self.decode else stream.encode()
        for f in target_schema:
            if f.name == "stream":
                col = pa.array([key] * len(ids), f.type)
            elif f.name == "id":
                col = pa.array(ids, f.type)
            elif f.name == "ms":
                col = pa.array([p[0] for p in pairs], pa.uint64()).cast(f.type)
            elif f.name == "seq":
                col = pa.array([p[1] for p in pairs], pa.uint64()).cast(f.type)
            elif f.name == "fields":
                col = pa.array(maps, f.type)
            else:
                name = f.name if self.decode else f.name.encode()
                vals = []
                for m in maps:
                    v = None
                    for k, x in m or ():
                        if k == name:
                            v = x
                    vals.append(v)
                col = pa.array(vals, pa.string() if self.decode else pa.binary()).cast(f.type)
            cols.append(col)
        return pa.RecordBatch.from_arrays(cols, schema=target_schema)

    def commit(self, end: Dict[str, str]) -> None:
        if self.group is None:
            return
        r = self._redis()
        for s in self.streams:
            upto = end.get(s)
            if upto is None or upto == ZERO_ID:
                continue
            while True:
                pend = r.execute_command(
                    "XPENDING", s, self.group, "-", upto, _READ_CHUNK, self.consumer
                )
                if not pend:
                    break
                r.execute_command("XACK", s, self.group, *[p[0] for p in pend])
                if len(pend) < _READ_CHUNK:
                    break

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _group_reply_entries(reply: Any, stream: str) -> List[Any]:
    """The entries of an XREADGROUP reply (RESP2 list or RESP3 map) for one stream."""
    if not reply:
        return []
    if isinstance(reply, dict):
        for k, v in reply.items():
            if as_text(k) == stream:
                return list(v)
        return []
    for k, v in reply:
        if as_text(k) == stream:
            return list(v)
    return []
