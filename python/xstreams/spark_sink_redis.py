"""The sink's executor-side writes to a server or a Redis Cluster (``option("url")``).

Each task groups its rows per stream, its streams per hash slot (one group on a server
that is not a cluster), and writes each group in one ``MULTI``/``EXEC`` on the node that
owns the slot, with a *marker* in the same slot:

    WATCH  <marker>                      # xstreams:sink:{<tag of the slot>}:<query>:<partition>
    XREVRANGE <marker> + - COUNT 1       # batch <id> rows <n> fingerprint <hash>?
    MULTI
    XADD <stream> ... (the group's rows, in the task's order, sent in chunks)
    XADD <marker> MAXLEN 1 * batch <id> rows <n> fingerprint <hash>
    EXEC                                 # nil: another attempt of this task moved the marker

The marker is one stream per (query, slot, partition), so two attempts of one task
(a retry racing a zombie, speculation) watch the same key and only one ``EXEC`` runs;
attempts of other tasks never touch it. A retry that finds its batch in the marker with
the same row count and fingerprint (a hash of the rows' XADD commands) skips the group;
with another fingerprint the batch was re-partitioned and the task fails
(:func:`repartitioned`), as writing would duplicate rows. A group whose ``EXEC`` meets
``MOVED``/``ASK``/``TRYAGAIN``/``CLUSTERDOWN`` ran none of its commands (``EXECABORT``):
the task reloads the slot map and writes the group again on the slot's new owner.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from .spark_io import MARKER_PREFIX, RowShape, as_text

_CHUNK = 10_000  # commands per write to the socket inside one MULTI
_REDIRECT_WAIT_S = 60.0  # how long a group waits for a slot to settle (resharding)
_WATCH_RETRIES = 1000


class SparkSinkError(ValueError):
    """A sink task refused to write (the reason in the message)."""


def repartitioned(batch: int, partition: int, slot: Optional[int], got: str, want: str) -> str:
    where = "" if slot is None else f" in hash slot {slot}"
    return (
        f"xstreams sink: batch {batch} was written before by task {partition}{where} with "
        f"other rows ({got}; this run: {want}): Spark re-partitioned the re-run batch, and "
        "writing it would duplicate rows. Run the query with the partitioning of the first "
        "run (or give IDMP options, whose identities drop re-sent rows)"
    )


def row_failed(key: bytes, err: Any) -> str:
    return f"xstreams sink: XADD to {as_text(key)!r} failed: {err}"


def marker_base(query: str) -> str:
    return MARKER_PREFIX + hashlib.sha1(query.encode()).hexdigest()[:16]


def is_cluster(client: Any) -> bool:
    from redis.cluster import RedisCluster

    return isinstance(client, RedisCluster)


def slot_of(key: bytes) -> int:
    from .spark_conn import key_slot

    return key_slot(key)


def marker_of(query: str, slot_key: Optional[bytes], partition: int) -> str:
    """The marker stream of one task partition in the slot of ``slot_key`` (None: a
    server that is not a cluster)."""
    base = marker_base(query)
    if slot_key is None:
        return f"{base}:{partition}"
    from .spark_conn import slot_marker_key

    return f"{slot_marker_key(base + ':', slot_key)}:{partition}"


class _Redirect(Exception):
    """The slot moved (or is moving): reload the slot map and write the group again."""


def _is_redirect(e: BaseException) -> bool:
    from redis import exceptions as ex

    if isinstance(e, (ex.MovedError, ex.AskError, ex.TryAgainError, ex.ClusterDownError)):
        return True
    head = str(e).split(" ", 1)[0]
    return head in ("MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN")


def drain(conn: Any, n: int) -> Optional[BaseException]:
    """Read the replies to ``n`` commands sent on ``conn`` (inside MULTI: ``+QUEUED`` or
    an error each); the first error, or None. With redis-py's hiredis parser the replies
    come straight from its reader, the call per reply of ``read_response`` (most of the
    sink's time on an executor) left out; other parsers go through ``read_response``."""
    from redis.exceptions import ResponseError

    first: Optional[BaseException] = None
    parser = getattr(conn, "_parser", None)
    reader = getattr(parser, "_reader", None)
    if reader is None or not hasattr(parser, "read_from_socket"):
        for _ in range(n):
            try:
                conn.read_response()
            except ResponseError as e:
                first = first or e
        return first
    from redis._parsers.hiredis import NOT_ENOUGH_DATA

    try:
        for _ in range(n):
            r = reader.gets()
            while r is NOT_ENOUGH_DATA:
                parser.read_from_socket()
                r = reader.gets()
            if isinstance(r, BaseException):
                if not isinstance(r, ResponseError):
                    raise r
                first = first or r
    except BaseException:
        conn.disconnect()  # the replies left unread would answer the next command
        raise
    return first


def _marker_entry(reply: Any) -> Dict[str, str]:
    if not reply:
        return {}
    fv = reply[0][1]
    pairs = fv.items() if isinstance(fv, dict) else zip(fv[::2], fv[1::2])
    return {as_text(k): as_text(v) for k, v in pairs}


class Group:
    """The rows of one task for one hash slot: ``(stream key, Arrow table)`` pairs."""

    def __init__(self, slot: Optional[int], parts: List[Tuple[bytes, Any]]) -> None:
        self.slot = slot
        self.parts = parts
        self.rows = sum(t.num_rows for _, t in parts)

    def packed(self, shape: RowShape, conn: Any) -> Iterator[Tuple[bytes, int]]:
        """The XADDs, packed, in chunks of at most ``_CHUNK`` commands."""
        for key, table in self.parts:
            for b in table.to_batches(max_chunksize=_CHUNK):
                yield shape.packed(key, b, conn)


def groups(parts: Sequence[Tuple[bytes, Any]], cluster: bool) -> List[Group]:
    """Per-stream tables grouped by hash slot (one group when not a cluster), in the
    order of their first stream."""
    if not cluster:
        return [Group(None, list(parts))] if parts else []
    by_slot: Dict[int, List[Tuple[bytes, Any]]] = {}
    for key, table in parts:
        by_slot.setdefault(slot_of(key), []).append((key, table))
    return [Group(s, p) for s, p in by_slot.items()]


class TaskWrite:
    """One task's writes to one target (see the module doc)."""

    def __init__(
        self,
        client: Any,
        shape: RowShape,
        query: str,
        batch: int,
        partition: int,
        expire_ms: Optional[int] = None,
        die_after: Optional[int] = None,
    ) -> None:
        self.client = client
        self.cluster = is_cluster(client)
        self.shape = shape
        self.query = query
        self.batch = batch
        self.partition = partition
        self.expire_ms = expire_ms
        self.die_after = die_after  # tests: the worker dies after this many groups
        # (slot, a stream key of the slot) of each group written by this attempt, and of
        # each group it holds, written now or found written (-1, None: not a cluster)
        self.written: List[Tuple[int, Optional[bytes]]] = []
        self.groups: List[Tuple[int, Optional[bytes]]] = []
        self.skipped = 0
        self.rows = 0

    def run(self, parts: Sequence[Tuple[bytes, Any]]) -> None:
        done = 0
        for g in groups(parts, self.cluster):
            self._group(g)
            done += 1
            if self.die_after is not None and done >= self.die_after:
                import os

                os._exit(17)  # a Python worker killed mid-write (tests only)

    def _node(self, slot: Optional[int]) -> Any:
        if slot is None:
            return self.client
        node = self.client.nodes_manager.get_node_from_slot(slot)
        return self.client.get_redis_connection(node)

    def _group(self, g: Group) -> None:
        self.groups.append((-1, None) if g.slot is None else (g.slot, g.parts[0][0]))
        deadline = time.monotonic() + _REDIRECT_WAIT_S
        wait = 0.05
        while True:
            try:
                self._transaction(self._node(g.slot), g)
                return
            except _Redirect:
                if time.monotonic() > deadline:
                    raise
                time.sleep(wait)
                wait = min(1.0, wait * 2)
                self.client.nodes_manager.initialize()

    def _transaction(self, node: Any, g: Group) -> None:
        slot_key = None if g.slot is None else g.parts[0][0]
        marker = marker_of(self.query, slot_key, self.partition)
        conn = node.connection_pool.get_connection()
        clean = False
        try:
            for _ in range(_WATCH_RETRIES):
                self._call(conn, "WATCH", marker)
                entry = _marker_entry(self._call(conn, "XREVRANGE", marker, "+", "-", "COUNT", "1"))
                if entry.get("batch") == str(self.batch):
                    self._call(conn, "UNWATCH")
                    self._check_same(conn, g, entry)
                    self.skipped += 1
                    clean = True
                    return
                if self._exec(conn, g, marker):
                    clean = True
                    return
            raise SparkSinkError(f"xstreams sink: marker {marker!r} kept moving")
        finally:
            if not clean:
                conn.disconnect()  # a half-read reply or an open MULTI: not reusable
            node.connection_pool.release(conn)

    def _call(self, conn: Any, *argv: Any) -> Any:
        conn.send_command(*argv)
        try:
            return conn.read_response()
        except Exception as e:
            if _is_redirect(e):
                raise _Redirect(str(e)) from e
            raise

    def _fingerprint(self, conn: Any, g: Group) -> str:
        h = hashlib.blake2b(digest_size=16)
        for packed, _ in g.packed(self.shape, conn):
            h.update(packed)
        return h.hexdigest()

    def _check_same(self, conn: Any, g: Group, entry: Dict[str, str]) -> None:
        want = f"{g.rows} rows, fingerprint {self._fingerprint(conn, g)}"
        got = f"{entry.get('rows')} rows, fingerprint {entry.get('fingerprint')}"
        if got != want:
            raise SparkSinkError(repartitioned(self.batch, self.partition, g.slot, got, want))

    def _exec(self, conn: Any, g: Group, marker: str) -> bool:
        """MULTI, the group's XADDs and the marker, EXEC. False: the WATCH fired."""
        from redis.exceptions import ResponseError

        h = hashlib.blake2b(digest_size=16)
        queued_error: Optional[BaseException] = None
        self._call(conn, "MULTI")
        for packed, n in g.packed(self.shape, conn):
            h.update(packed)
            conn.send_packed_command([packed])  # a list: redis-py iterates what it sends
            queued_error = queued_error or drain(conn, n)
        tail: List[List[Any]] = [
            ["XADD", marker, "MAXLEN", "1", "*", "batch", str(self.batch),
             "rows", str(g.rows), "fingerprint", h.hexdigest()],
        ]  # fmt: skip
        if self.expire_ms is not None:
            tail.append(["PEXPIRE", marker, str(self.expire_ms)])
        tail.append(["EXEC"])
        conn.send_packed_command(conn.pack_commands(tail))
        for _ in tail[:-1]:
            try:
                conn.read_response()
            except ResponseError as e:
                queued_error = queued_error or e
        try:
            replies = conn.read_response()
        except ResponseError as e:
            cause = queued_error or e
            if _is_redirect(cause):
                raise _Redirect(str(cause)) from cause
            raise SparkSinkError(row_failed(g.parts[0][0], cause)) from cause
        if replies is None:
            return False  # another attempt of this task wrote the marker: look again
        self.rows += g.rows
        self.written.append((-1, None) if g.slot is None else (g.slot, g.parts[0][0]))
        failed = [(i, r) for i, r in enumerate(replies) if isinstance(r, Exception)]
        if failed:
            # Redis does not roll back the other commands of an EXEC: the batch is marked
            # written (as a re-run would fail on the same rows), and the task fails.
            raise SparkSinkError(row_failed(self._key_of_row(g, failed[0][0]), failed[0][1]))
        return True

    def _key_of_row(self, g: Group, i: int) -> bytes:
        for key, table in g.parts:
            if i < table.num_rows:
                return key
            i -= table.num_rows
        return g.parts[-1][0]


def check_partitions(
    client: Any,
    query: str,
    batch: int,
    written: Dict[int, List[Tuple[int, Optional[bytes]]]],
    partitions: int,
) -> None:
    """The driver's look after a batch: a task of this run that holds no rows of a slot
    must not have a marker of this batch there (a previous run of the batch, partitioned
    otherwise, wrote those rows). ``written``: partition -> the (slot, a key of the slot)
    groups its task held (written, or found written)."""
    keys = {s: k for ws in written.values() for s, k in ws}
    cluster = is_cluster(client)
    todo: Dict[int, List[Tuple[int, str]]] = {}
    for s, k in keys.items():
        mine = {p for p, ws in written.items() if any(w[0] == s for w in ws)}
        for p in range(partitions):
            if p not in mine:
                todo.setdefault(s, []).append((p, marker_of(query, k, p)))
    for s, markers in todo.items():
        node = client
        if cluster:
            node = client.get_redis_connection(client.nodes_manager.get_node_from_slot(s))
        pipe = node.pipeline(transaction=False)
        for _, m in markers:
            pipe.execute_command("XREVRANGE", m, "+", "-", "COUNT", "1")
        for (p, _), reply in zip(markers, pipe.execute()):
            if _marker_entry(reply).get("batch") == str(batch):
                raise SparkSinkError(
                    repartitioned(
                        batch, p, None if s < 0 else s, "rows in this slot", "no rows there"
                    )
                )
