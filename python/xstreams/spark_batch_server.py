"""``spark.read.format("xstreams").option("url", ...)``: the entries of streams on a live
server or a Redis Cluster as a DataFrame, read by the executors in ID-range partitions
(:mod:`xstreams.spark_source_server`), planned once on the driver.

Options: ``url`` and the connection options of :mod:`xstreams.spark_conn`; ``stream``,
``streams`` and/or ``streamPattern``; ``start`` / ``end`` (XRANGE's bounds: ``-``, ``+``,
IDs, incomplete IDs, exclusive ``(`` IDs; default everything); ``minPartitions`` (each
stream's share of it: its number of ID ranges); ``decode``. ``end`` (``+`` included) is
fixed to an ID when the read is planned: entries added while it runs are not read.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Mapping, Optional, Tuple

from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from .spark_conn import connect, scan_streams
from .spark_io import (
    ZERO_ID,
    as_text,
    bad_option,
    bool_option,
    get_option,
    id_text,
    min_partitions,
    parse_id,
    per_stream_parts,
    stream_keys,
)
from .spark_source_server import plan_stream, read_batches

_MAX_SEQ = (1 << 64) - 1


def _before(pair: Tuple[int, int]) -> Tuple[int, int]:
    """The ID just before ``pair`` (``0-0`` stays)."""
    ms, seq = pair
    if seq > 0:
        return ms, seq - 1
    return (ms - 1, _MAX_SEQ) if ms > 0 else (0, 0)


def exclusive_start(raw: Optional[str]) -> str:
    """XRANGE's start bound as the ID after which a range begins."""
    s = "-" if raw is None else str(raw).strip()
    if s == "-":
        return ZERO_ID
    if s.startswith("("):
        return id_text(parse_id(s[1:], "start"))
    return id_text(_before(parse_id(s, "start")))


def inclusive_end(raw: Optional[str], last: str) -> str:
    """XRANGE's end bound as the last ID a range holds (``+``: ``last``)."""
    s = "+" if raw is None else str(raw).strip()
    if s == "+":
        return last
    if s.startswith("("):
        return id_text(_before(parse_id(s[1:], "end")))
    text = s if "-" in s else f"{s}-{_MAX_SEQ}"
    return id_text(parse_id(text, "end"))


class ServerBatchReader(DataSourceReader):
    def __init__(self, options: Mapping[str, Any], schema: StructType) -> None:
        self.conn_options = dict(options)
        if get_option(options, "group") is not None:
            raise bad_option(
                "group",
                'with option("url") is read by spark.readStream (the consumer-group mode); '
                "a batch read of a server reads ID ranges",
            )
        self.pattern = get_option(options, "streamPattern")
        if self.pattern is not None and (
            get_option(options, "stream") is None and get_option(options, "streams") is None
        ):
            self.streams: List[str] = []
        else:
            self.streams = stream_keys(options)
        self.start = exclusive_start(get_option(options, "start"))
        self.end = get_option(options, "end")
        inclusive_end(self.end, ZERO_ID)  # checked now, before any data moves
        self.min_parts = min_partitions(options)
        self.decode = bool_option(options, "decode", True)
        self.schema = schema

    def partitions(self) -> List[InputPartition]:
        r = connect(self.conn_options)
        try:
            keys = list(self.streams)
            if self.pattern is not None:
                keys = sorted(set(keys) | set(scan_streams(r, str(self.pattern))))
            ranges = []
            for s in keys:
                got = r.execute_command("XREVRANGE", s, "+", "-", "COUNT", 1)
                last = as_text(got[0][0]) if got else ZERO_ID
                end = inclusive_end(self.end, last)
                if parse_id(end) > parse_id(self.start):
                    ranges.append((s, end))
            k = per_stream_parts(self.min_parts, len(ranges))
            parts: List[InputPartition] = []
            for s, end in ranges:
                parts += plan_stream(r, s, self.start, end, k, len(parts))
        finally:
            r.close()
        return parts or [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not hasattr(partition, "stream"):
            return
        yield from read_batches(self.conn_options, partition, None, self.decode, self.schema)
