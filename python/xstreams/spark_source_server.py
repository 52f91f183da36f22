"""How the ``xstreams`` source reads a live server or a Redis Cluster: a batch's ID range
of one stream split into ID-range partitions, each read by one task (``XRANGE``, or in
group mode ``XREADGROUP`` history of one consumer), and the entries turned into Arrow.

A split is a function of the batch's ``(start, end]`` range, the range's first entry and
the number of parts alone, so a re-run batch (same offsets) reads the same rows in the
same partitions: the entries of a range already planned do not change, but for
deletions (``XDEL``, trimming), which only remove rows.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

from pyspark.sql.datasource import InputPartition

from .spark_io import as_text, id_text, parse_id

#: Entries one command reads at a time.
READ_CHUNK = 10_000
_MAX_SEQ = (1 << 64) - 1


class ServerPartition(InputPartition):
    """Entries of ``stream`` with IDs in ``(start, end]``; in group mode those the
    consumer ``consumer`` holds (its pending entries) and, with ``deliver``, then those
    ``XREADGROUP ... >`` delivers to it up to ``end`` (``fresh``: about how many)."""

    def __init__(
        self,
        index: int,
        stream: str,
        start: str,
        end: str,
        consumer: Optional[str] = None,
        deliver: bool = False,
        fresh: Optional[int] = None,
    ) -> None:
        super().__init__(index)
        self.stream = stream
        self.start = start
        self.end = end
        self.consumer = consumer
        self.deliver = deliver
        self.fresh = fresh


class RangeProbe:
    """What :func:`split_range` asks a stream: the first entry in a span of
    milliseconds, and the sequence of the last entry of one millisecond."""

    def __init__(self, r: Any, stream: str) -> None:
        self.r = r
        self.stream = stream

    def first_in(self, ms0: int, ms1: int) -> Optional[Tuple[int, int]]:
        got = self.r.execute_command(
            "XRANGE", self.stream, f"{ms0}-0", f"{ms1}-{_MAX_SEQ}", "COUNT", 1
        )
        return parse_id(as_text(got[0][0])) if got else None

    def last_seq(self, ms: int) -> Optional[int]:
        got = self.r.execute_command(
            "XREVRANGE", self.stream, f"{ms}-{_MAX_SEQ}", f"{ms}-0", "COUNT", 1
        )
        return parse_id(as_text(got[0][0]))[1] if got else None


#: Spans of time weighed per part of a split.
WINDOWS_PER_PART = 16


def split_range(start: str, first: str, end: str, parts: int, probe: Any) -> List[Tuple[str, str]]:
    """``(start, end]`` as up to ``parts`` consecutive ``(lo, hi]`` ranges covering it,
    cut where the entries from ``first`` (the range's first entry) to ``end`` are about
    evenly shared. The time from ``first`` to ``end`` is cut in ``WINDOWS_PER_PART``
    windows per part (each millisecond its own window when there are fewer), each
    weighed by the entries of the first millisecond it holds entries in (``probe``); a
    cut falls in such a millisecond, by sequence. Bursts and steady rates are both shared
    out evenly; the cuts depend on the entries of the range alone, so a re-run batch is
    split the same way."""
    a, b = parse_id(first), parse_id(end)
    if parts <= 1 or a >= b:
        return [(start, end)]
    nwin = WINDOWS_PER_PART * parts
    span = b[0] - a[0] + 1
    # (a millisecond with entries, its first sequence in the range, its entries): one
    # per millisecond, or per window (the first millisecond it holds entries in).
    spans: List[Tuple[int, int, int]] = []
    if span <= nwin:
        for ms in range(a[0], b[0] + 1):
            lo = a[1] if ms == a[0] else 0
            hi = b[1] if ms == b[0] else probe.last_seq(ms)
            if hi is not None and hi >= lo:
                spans.append((ms, lo, hi - lo + 1))
    else:
        for i in range(nwin):
            m0 = a[0] + span * i // nwin
            m1 = a[0] + span * (i + 1) // nwin - 1
            got = (a if i == 0 else probe.first_in(m0, m1)) if m1 >= m0 else None
            if got is None:
                continue
            hi = b[1] if got[0] == b[0] else probe.last_seq(got[0])
            spans.append((got[0], got[1], max(1, (hi or 0) - got[1] + 1)))
    total = sum(w for _ms, _lo, w in spans)
    cuts: List[Tuple[int, int]] = []
    for i in range(1, parts):
        t = total * i // parts
        acc = 0
        for ms, lo, w in spans:
            if t <= acc + w:
                if t > acc:
                    cuts.append((ms, lo + (t - acc) - 1))
                break
            acc += w
    out = []
    lo_id = start
    for c in sorted(set(cuts)):
        if parse_id(lo_id) < c < b:
            out.append((lo_id, id_text(c)))
            lo_id = id_text(c)
    out.append((lo_id, end))
    return out


def entry_size(entry: Any) -> int:
    """Bytes of an entry as a server sent it: its ID, fields and values."""
    eid, fv = entry[0], entry[1]
    return len(eid) + (sum(len(x) for x in fv) if fv else 0)


def group_reply_entries(reply: Any, stream: str) -> List[Any]:
    """The entries of an XREADGROUP reply (RESP2 list or RESP3 map) for one stream."""
    if not reply:
        return []
    items = reply.items() if isinstance(reply, dict) else reply
    for k, v in items:
        if as_text(k) == stream:
            return list(v)
    return []


def read_partition(
    r: Any, part: ServerPartition, group: Optional[str], decode: bool, field_schema: Any
) -> Iterator[Any]:
    """The partition's entries as ``xrange_arrow``-shaped batches of up to
    :data:`READ_CHUNK` rows, in ID order (the reply's rows become Arrow in Rust: no
    Python object per row beyond what redis-py's parser makes)."""
    from ._xstreams import _reply_arrow

    cur = part.start
    held = 0
    while True:
        if group is not None:
            got = r.execute_command(
                "XREADGROUP", "GROUP", group, part.consumer, "COUNT", READ_CHUNK,
                "STREAMS", part.stream, cur,
            )  # fmt: skip
            entries = group_reply_entries(got, part.stream)
        else:
            entries = r.execute_command(
                "XRANGE", part.stream, f"({cur}", part.end, "COUNT", READ_CHUNK
            )
        if not entries:
            break
        batch, kept = _reply_arrow(
            part.stream, entries, part.end, decode=decode, schema=field_schema
        )
        held += kept
        if kept:
            yield batch
        if kept < len(entries) or len(entries) < READ_CHUNK:
            break
        cur = as_text(entries[-1][0])
    if group is not None and part.deliver:
        yield from _deliver(r, part, group, held, decode, field_schema)


def _deliver(
    r: Any, part: ServerPartition, group: str, held: int, decode: bool, field_schema: Any
) -> Iterator[Any]:
    """``XREADGROUP GROUP g c COUNT k STREAMS s >`` until an entry reaches the
    partition's end or the reply is empty; the last reply's entries after the end stay
    pending for the consumer, out of this batch (the next one reads them back). ``k``:
    the rows the planner expected in the partition less those the consumer already
    held (a re-run attempt's among them), so that the reads stop at the end; past the
    estimate, 1, 2, 4, ..."""
    from ._xstreams import _reply_arrow

    last, _lag = group_state(r, part.stream, group)
    end = parse_id(part.end)
    if last is not None and parse_id(last) >= end:
        return  # all of (start, end] delivered already (a re-run attempt)
    left = None if part.fresh is None else part.fresh - held
    probe = 1
    while True:
        if left is not None and left > 0:
            n = min(READ_CHUNK, left)
        elif left is None:
            n = READ_CHUNK
        else:
            n, probe = min(READ_CHUNK, probe), probe * 2
        got = r.execute_command(
            "XREADGROUP", "GROUP", group, part.consumer, "COUNT", n,
            "STREAMS", part.stream, ">",
        )  # fmt: skip
        entries = group_reply_entries(got, part.stream)
        if not entries:
            return
        batch, kept = _reply_arrow(
            part.stream, entries, part.end, decode=decode, schema=field_schema
        )
        if kept:
            yield batch
        if kept < len(entries) or parse_id(as_text(entries[-1][0])) >= end:
            return
        if left is not None:
            left -= len(entries)


def group_state(r: Any, stream: str, group: str) -> Tuple[Optional[str], Optional[int]]:
    """The group's last delivered ID on ``stream`` and its lag (entries it has yet to
    receive), when the server tells them (None where not told)."""
    import redis

    try:
        groups = r.execute_command("XINFO", "GROUPS", stream)
    except redis.ResponseError:
        return None, None
    for g in groups:
        info = g if isinstance(g, dict) else dict(zip(g[::2], g[1::2]))
        info = {as_text(k): v for k, v in info.items()}
        if as_text(info.get("name", b"")) == group:
            last, lag = info.get("last-delivered-id"), info.get("lag")
            return (None if last is None else as_text(last)), (None if lag is None else int(lag))
    return None, None


def read_batches(
    conn_options: Any, part: ServerPartition, group: Optional[str], decode: bool, schema: Any
) -> Iterator[Any]:
    """One partition as Arrow batches of the source's schema, on an executor."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from .spark_conn import task_client
    from .spark_replay import _field_schema

    target = to_arrow_schema(schema)
    # The worker's kept client (a reader stopped early closes it: see task_client).
    with task_client(conn_options) as r:
        for b in read_partition(r, part, group, decode, _field_schema(schema)):
            cols = []
            for f in target:
                col = b.column(f.name)
                cols.append(col if col.type == f.type else col.cast(f.type))
            yield pa.RecordBatch.from_arrays(cols, schema=target)


def plan_stream(
    r: Any, stream: str, start: str, end: str, parts: int, first_index: int = 0
) -> List[ServerPartition]:
    """The ID-range partitions of one stream's ``(start, end]`` (none when it holds no
    entry)."""
    first = r.execute_command("XRANGE", stream, f"({start}", end, "COUNT", 1)
    if not first:
        return []
    cuts = split_range(start, as_text(first[0][0]), end, parts, RangeProbe(r, stream))
    return [ServerPartition(first_index + i, stream, a, b) for i, (a, b) in enumerate(cuts)]
