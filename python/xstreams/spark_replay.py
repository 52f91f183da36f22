"""Reading a persisted store's entries for Spark: the batch reader of
``spark.read.format("xstreams")`` over a store directory, and the planned parts it and the
streaming source (:mod:`xstreams.spark_source`) read through the replay reader of the
extension, without opening the store."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from .spark_io import int_option, min_partitions

_META = ("stream", "id", "ms", "seq", "fields")


class _ReplayPartition(InputPartition):
    def __init__(self, index: int, files: Tuple[Any, ...], part: Optional[Tuple[Any, ...]]):
        super().__init__(index)
        self.files = files
        self.part = part


# One fully loaded store per executor process (the latest plan's), for "full" parts.
_LOADED: Dict[Any, Any] = {}


def _loaded_store(files: Tuple[Any, ...]) -> Any:
    from xstreams import _xstreams

    key = json.dumps(files, sort_keys=True)
    st = _LOADED.get(key)
    if st is None:
        _LOADED.clear()
        st = _xstreams._ReplayStore(files)
        _LOADED[key] = st
    return st


def _option(options: Any, name: str, default: Any = None) -> Any:
    for k in (name, name.lower()):
        if k in options:
            return options[k]
    return default


class _Reader(DataSourceReader):
    def __init__(self, options: Any, schema: StructType) -> None:
        path = _option(options, "path")
        if not path:
            raise ValueError('the xstreams source needs option("path", <store directory>)')
        self.path = os.path.abspath(path)
        streams = _option(options, "streams")
        if streams is not None:
            keys = json.loads(streams)
            if isinstance(keys, str):
                keys = [keys]
        else:
            one = _option(options, "stream")
            if one is None:
                raise ValueError('the xstreams source needs option("stream", <key>) or "streams"')
            keys = [one]
        self.streams: List[str] = [str(k) for k in keys]
        self.start = _option(options, "start")
        self.end = _option(options, "end")
        self.group = _option(options, "group")
        self.db = int(_option(options, "db", 0))
        self.rows_per_part = int_option(options, "rowsPerPartition", 500_000, 1)
        self.min_parts = min_partitions(options)
        self.decode = str(_option(options, "decode", "true")).lower() != "false"
        self.schema = schema
        self.field_schema = _field_schema(schema)

    def partitions(self) -> List[InputPartition]:
        from xstreams import _xstreams

        files, parts = _xstreams._replay_plan(
            self.path,
            [s.encode() for s in self.streams],
            start=self.start,
            end=self.end,
            group=self.group,
            db=self.db,
            rows_per_part=self.rows_per_part,
            # The planner shares it among the streams with entries in the range.
            min_parts=self.min_parts,
        )
        if not parts:
            return [_ReplayPartition(0, files, None)]
        return [_ReplayPartition(i, files, p) for i, p in enumerate(parts)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read_replay_part(
            partition, self.group, self.db, self.decode, self.field_schema, self.schema
        )


def _field_schema(schema: StructType) -> Any:
    """The pyarrow schema of the typed field columns, or None (the ``fields`` map)."""
    extra = [f for f in schema.fields if f.name not in _META]
    if not extra:
        return None
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    return pa.schema([pa.field(f.name, to_arrow_type(f.dataType)) for f in extra])


def _read_replay_part(
    partition: Any, group: Any, db: int, decode: bool, field_schema: Any, schema: StructType
) -> Iterator[Any]:
    """The batches of one planned part of a persisted store, in ``schema``'s columns."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from xstreams import _xstreams

    part = partition.part
    if part is None:
        return
    files = partition.files
    kw = dict(group=group, db=db, decode=decode, schema=field_schema, signed=True)
    if part[1] == "full":
        batches = _loaded_store(files).read(part, **kw)
    else:
        batches = _xstreams._replay_read(files, part, **kw)
    target = to_arrow_schema(schema)
    for b in batches:
        cols = []
        for f in target:
            col = b.column(f.name)
            if col.type != f.type:
                col = col.cast(f.type)
            cols.append(col)
        yield pa.RecordBatch.from_arrays(cols, schema=target)
