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
* ``url``: a live server or a Redis Cluster (:mod:`xstreams.spark_conn`): XRANGE by ID
  range, each stream's range split into ``minPartitions`` ID ranges
  (:mod:`xstreams.spark_source_server`).
* ``url`` with ``group``/``consumer``: the driver plans each batch's end, each stream's
  executor task reads what its consumer holds and has the rest delivered to it
  (``XREADGROUP >``), and only batches Spark committed are acknowledged
  (:mod:`xstreams.spark_source_group`).
* ``streamPattern``: the streams whose keys match (SCAN on every shard), looked for
  again at each trigger; a new key is read from its start (in group mode the group is
  created on it at ``startingId``).
* Admission control: ``maxEntriesPerTrigger`` and ``maxBytesPerTrigger`` (an entry's ID,
  fields and values) bound every batch, ``Trigger.AvailableNow`` included (the run stops
  at each stream's last ID when it started).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from .spark_conn import connect, scan_streams
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
from .spark_source_group import CommitWatcher, GroupReads, Limits
from .spark_source_server import (
    READ_CHUNK,
    ServerPartition,
    entry_size,
    plan_stream,
    read_batches,
)

# Offsets remembered to recognize this reader's line in the checkpoint's offset log.
_PLANNED_KEPT = 16


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


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming reader of the ``xstreams`` source (see the module doc)."""

    def __init__(self, options: Mapping[str, Any], schema: StructType) -> None:
        from .spark_replay import _field_schema

        self.path, self.url = target(options)
        self.conn_options = dict(options)
        self.pattern = get_option(options, "streamPattern")
        if self.pattern is not None and str(self.pattern) == "":
            raise bad_option("streamPattern", "must be a SCAN pattern such as events:*")
        if self.pattern is not None and (
            get_option(options, "stream") is None and get_option(options, "streams") is None
        ):
            self.streams: List[str] = []
        else:
            self.streams = stream_keys(options)
        self.db = int_option(options, "db", 0, 0) or 0
        self.max_entries = int_option(options, "maxEntriesPerTrigger", None, 1)
        self.max_bytes = int_option(options, "maxBytesPerTrigger", None, 1)
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
        consumers = int_option(options, "consumers", 1, 1) or 1
        if consumers > 1 and self.group is None:
            raise bad_option("consumers", 'needs option("group") and option("consumer")')
        self.checkpoint = get_option(options, "checkpointLocation")
        if self.checkpoint is not None and self.group is None:
            raise bad_option("checkpointLocation", "is read by the group mode only (its acks)")
        if self.url is not None and self.db:
            raise bad_option("db", 'is given in the URL for option("url") (redis://host:port/db)')
        self._client: Any = None
        self._target: Optional[Dict[str, str]] = None
        self._planned: List[Dict[str, str]] = []
        self._known: set = set()
        self.groups: Optional[GroupReads] = None
        self._watcher: Optional[CommitWatcher] = None
        if self.group is not None:
            at = "0" if self.starting == "0" else self.starting
            self.groups = GroupReads(str(self.group), str(self.consumer), consumers, at)
        self._streams_now()

    def __getstate__(self) -> Dict[str, Any]:
        # Executors get the reader pickled: without the driver's connection.
        state = dict(self.__dict__)
        state["_client"] = None
        state["_watcher"] = None
        return state

    # ------------------------------------------------------------------------ helpers

    def _redis(self) -> Any:
        if self._client is None:
            self._client = connect(self.conn_options)
        return self._client

    def _streams_now(self) -> List[str]:
        """The ``stream``/``streams`` keys and those ``streamPattern`` matches now; in
        group mode the group is made on each one seen for the first time."""
        keys = list(self.streams)
        if self.pattern is not None:
            keys = sorted(set(keys) | set(self._scan()))
        new = [k for k in keys if k not in self._known]
        if new and self.groups is not None:
            self.groups.create(self._redis(), new)
        self._known.update(new)
        return keys

    def _scan(self) -> List[str]:
        if self.path is None:
            return scan_streams(self._redis(), str(self.pattern))
        import xstreams

        store = xstreams.Store(self.path, read_only=True)
        try:
            found, cursor = set(), "0"
            while True:
                cursor, keys = store.execute_command(
                    "SCAN", cursor, "MATCH", self.pattern, "COUNT", 1000, "TYPE", "stream",
                    db=self.db,
                )  # fmt: skip
                found.update(as_text(k) for k in keys)
                cursor = as_text(cursor)
                if cursor == "0":
                    return sorted(found)
        finally:
            store.close()

    def _streams_of(self, start: Mapping[str, str]) -> List[str]:
        """The streams of the next batch: those of ``start`` and, but under
        ``AvailableNow`` (its streams are those of its start), those there are now."""
        if self._target is not None:
            now = list(self._target)
        else:
            now = self._streams_now()
        return sorted(set(now) | set(start)) if self.pattern is not None else now

    def _watch(self) -> None:
        """With the query's checkpoint: acknowledge each batch once it is committed."""
        if self.groups is None or self.checkpoint is None or self._watcher is not None:
            return
        planned = self._planned
        self._watcher = CommitWatcher(
            self.groups, self.conn_options, str(self.checkpoint), lambda: list(planned)
        )
        self._watcher.start()

    def _remember(self, off: Dict[str, str]) -> None:
        if off not in self._planned:
            self._planned.append(dict(off))
            del self._planned[:-_PLANNED_KEPT]

    def _last_ids(self, streams: List[str]) -> Dict[str, str]:
        """Each stream's last entry ID now (``0-0`` for a missing or empty stream)."""
        out = {}
        if self.path is not None:
            fast = self._last_ids_from_index(streams)
            if fast is not None:
                return fast
            import xstreams

            store = xstreams.Store(self.path, read_only=True)
            try:
                for s in streams:
                    got = store.execute_command("XREVRANGE", s, "+", "-", "COUNT", 1, db=self.db)
                    out[s] = as_text(got[0][0]) if got else ZERO_ID
            finally:
                store.close()
        else:
            r = self._redis()
            for s in streams:
                got = r.execute_command("XREVRANGE", s, "+", "-", "COUNT", 1)
                out[s] = as_text(got[0][0]) if got else ZERO_ID
        return out

    def _last_ids_from_index(self, streams: List[str]) -> Optional[Dict[str, str]]:
        """Each stream's last ID from the snapshot's node index, without loading the
        store, when the logs after the snapshot do not touch the streams (a compacted
        store); else None. A node's last ID may be an entry deleted since: as an offset
        it bounds the same entries, and every later entry has a greater ID."""
        from xstreams import _xstreams

        _, plan = _xstreams._replay_plan(self.path, [s.encode() for s in streams], db=self.db)
        if any(p[1] != "snapshot" for p in plan):
            return None
        out = {s: ZERO_ID for s in streams}
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

    def _capped_at_nodes(
        self, streams: List[str], start: Dict[str, str], cap: int
    ) -> Optional[Dict[str, str]]:
        """The end offsets of a batch of at most ``cap`` entries, ending each stream at a
        snapshot node's last ID (so up to a node's entries under the cap), from the node
        index alone (which also bounds each stream: no separate look for its last ID): a
        batch of a compacted store is planned without loading it. None (the caller counts
        entry by entry) when a log touches a stream or a stream's share is smaller than
        its first node."""
        ends = []
        for s in streams:
            e = self._node_ends(s, start[s])
            if e is None:
                return None
            ends.append(e)
        take = _water_fill([e[-1][1] if e else 0 for e in ends], cap)
        out = {}
        for s, e, t in zip(streams, ends, take):
            fit = [last for last, upto in e if upto <= t]
            if t and not fit:
                return None
            out[s] = fit[-1] if fit else start[s]
        return out

    def _sized_after(
        self, stream: str, start: str, end: str, count: Optional[int], store: Any
    ) -> List[Tuple[str, int]]:
        """``(ID, bytes)`` of up to ``count`` entries in ``(start, end]`` (bytes: the
        entry's ID, fields and values)."""
        out: List[Tuple[str, int]] = []
        cur = start
        while count is None or len(out) < count:
            n = READ_CHUNK if count is None else min(READ_CHUNK, count - len(out))
            if store is not None:
                b = store.xrange_arrow(stream, f"({cur}", end, count=n, db=self.db, decode=False)
                ids = [as_text(x) for x in b.column("id").to_pylist()]
                got = list(zip(ids, _row_bytes(b)))
            else:
                ents = self._redis().execute_command("XRANGE", stream, f"({cur}", end, "COUNT", n)
                got = [(as_text(e[0]), entry_size(e)) for e in ents]
            out += got
            if len(got) < n:
                break
            cur = got[-1][0]
        return out

    # ------------------------------------------------------------------------ offsets

    def initialOffset(self) -> Dict[str, str]:
        streams = self._streams_now()
        if self.group is not None:
            # The consumers' pending entries first: everything after 0-0 they hold.
            return {s: ZERO_ID for s in streams}
        if self.starting == "$":
            return self._last_ids(streams)
        at = ZERO_ID if self.starting == "0" else id_text(parse_id(self.starting))
        return {s: at for s in streams}

    def getDefaultReadLimit(self) -> Any:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxBytes, ReadMaxRows

        if self.max_entries is not None:
            return ReadMaxRows(self.max_entries)
        if self.max_bytes is not None:
            return ReadMaxBytes(self.max_bytes)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """An ``AvailableNow`` run reads up to each stream's last ID now, in batches
        under the caps."""
        self._target = self._last_ids(self._streams_now())

    def _caps(self, limit: Any) -> Tuple[Optional[int], Optional[int]]:
        from pyspark.sql.streaming.datasource import ReadMaxBytes, ReadMaxRows

        if isinstance(limit, ReadMaxRows):
            return limit.max_rows, self.max_bytes
        if isinstance(limit, ReadMaxBytes):
            return self.max_entries, limit.max_bytes
        if limit is None:
            return self.max_entries, self.max_bytes
        return None, None  # ReadAllAvailable: Spark asks for everything (Trigger.Once)

    def latestOffset(self, start: Dict[str, str], limit: Any = None) -> Dict[str, str]:
        streams = self._streams_of(start)
        start = {s: start.get(s, ZERO_ID) for s in streams}
        rows, nbytes = self._caps(limit)
        if self.groups is not None:
            r = self._redis()
            self._watch()
            # Spark asks for the batch after ``start`` only once the batch ending there
            # is in its commit log: all of it may be acknowledged.
            self.groups.ack(r, streams, start)
            end = self.groups.plan(r, streams, start, Limits(rows, nbytes, self._target))
        else:
            end = self._plain_latest(streams, start, rows, nbytes)
        self._remember(start)
        self._remember(end)
        return end

    def _plain_latest(
        self, streams: List[str], start: Dict[str, str], cap: Optional[int], nbytes: Optional[int]
    ) -> Dict[str, str]:
        if cap is not None and nbytes is None and self._target is None and self.path is not None:
            at_nodes = self._capped_at_nodes(streams, start, cap)
            if at_nodes is not None:
                return at_nodes
        last = self._last_ids(streams) if self._target is None else self._target
        end = {s: id_max(start[s], last.get(s, ZERO_ID)) for s in streams}
        if cap is None and nbytes is None:
            return end
        store = None
        if self.path is not None:
            import xstreams

            store = xstreams.Store(self.path, read_only=True)
        try:
            share = None if nbytes is None else max(1, nbytes // max(1, len(streams)))
            sized = []
            for s in streams:
                if end[s] == start[s]:
                    sized.append([])
                    continue
                got = self._sized_after(s, start[s], end[s], cap, store)
                sized.append(_within_bytes(got, share))
        finally:
            if store is not None:
                store.close()
        take = _water_fill([len(x) for x in sized], cap if cap is not None else 1 << 62)
        return {
            s: (sized[i][take[i] - 1][0] if take[i] else start[s]) for i, s in enumerate(streams)
        }

    def partitions(self, start: Dict[str, str], end: Dict[str, str]) -> List[InputPartition]:
        self._remember(end)
        self._watch()
        live = [s for s in end if parse_id(end[s]) > parse_id(start.get(s, ZERO_ID))]
        if self.path is None:
            return self._server_partitions(live, start, end)
        from xstreams import _xstreams

        from .spark_replay import _ReplayPartition

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

    def _server_partitions(
        self, live: List[str], start: Dict[str, str], end: Dict[str, str]
    ) -> List[InputPartition]:
        parts: List[InputPartition] = []
        if self.groups is not None:
            # Per stream: its consumer's partition (what it holds, then what it is
            # delivered up to the end), and one for each other consumer of the query
            # holding entries of the range (a batch planned with other consumers).
            g = self.groups
            r = self._redis()
            for s in live:
                a = start.get(s, ZERO_ID)
                mine = g.owner(s, list(end))
                for name in g.names:
                    if name == mine:
                        fresh = g.fresh(s, a, end[s])
                        if fresh is None:  # not planned here (a restart): count the range
                            fresh = g.count(r, s, a, end[s])
                        parts.append(ServerPartition(len(parts), s, a, end[s], name, True, fresh))
                    elif g.holds(r, s, name, a, end[s]):
                        parts.append(ServerPartition(len(parts), s, a, end[s], name))
            return parts
        k = per_stream_parts(self.min_parts, len(live))
        r = self._redis()
        for s in live:
            parts += plan_stream(r, s, start.get(s, ZERO_ID), end[s], k, len(parts))
        return parts

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, ServerPartition):
            yield from read_batches(
                self.conn_options, partition, self.group, self.decode, self.schema
            )
            return
        from .spark_replay import _read_replay_part

        yield from _read_replay_part(
            partition, None, self.db, self.decode, self.field_schema, self.schema
        )

    def commit(self, end: Dict[str, str]) -> None:
        if self.groups is not None:
            self.groups.ack(self._redis(), list(end), end)

    def stop(self) -> None:
        try:
            if self._watcher is not None:
                self._watcher.stop()
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None


def _within_bytes(sized: List[Tuple[str, int]], cap: Optional[int]) -> List[Tuple[str, int]]:
    """The first entries up to the one whose bytes reach ``cap`` (at least one)."""
    if cap is None:
        return sized
    acc = 0
    for i, (_id, n) in enumerate(sized):
        acc += n
        if acc >= cap:
            return sized[: i + 1]
    return sized


def _row_bytes(batch: Any) -> List[int]:
    """Each row's ID, field and value bytes of an ``xrange_arrow(decode=False)`` batch."""
    import pyarrow.compute as pc

    ids = pc.binary_length(batch.column("id")).to_pylist()
    fields = batch.column("fields")
    offsets = fields.offsets.to_pylist()
    keys = pc.binary_length(fields.keys).to_pylist()
    vals = pc.binary_length(fields.items).to_pylist()
    out = []
    for i, n in enumerate(ids):
        a, b = offsets[i], offsets[i + 1]
        out.append(n + sum(keys[a:b]) + sum(vals[a:b]))
    return out
