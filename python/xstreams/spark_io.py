"""What the ``xstreams`` Spark source and sink share: their options, stream IDs as offsets,
Arrow columns turned into XADD arguments (connections: :mod:`xstreams.spark_conn`).

Every bad option raises :class:`ValueError` naming the option (``option("maxlen")``...),
before any data moves.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any, Iterator, List, Mapping, Optional, Tuple

#: The ID before every entry: an offset meaning "nothing read yet".
ZERO_ID = "0-0"

# Marker streams of the sink: one entry (``batch``, ``query``, ``stream``), trimmed to 1.
MARKER_PREFIX = "xstreams:sink:"


def get_option(options: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """An option by name, case-insensitively (Spark lower-cases some option maps)."""
    for k in (name, name.lower()):
        if k in options:
            return options[k]
    low = name.lower()
    for k, v in options.items():
        if k.lower() == low:
            return v
    return default


def bad_option(name: str, why: str) -> ValueError:
    return ValueError(f'xstreams: option("{name}") {why}')


def int_option(
    options: Mapping[str, Any], name: str, default: Optional[int] = None, minimum: int = 0
) -> Optional[int]:
    raw = get_option(options, name)
    if raw is None:
        return default
    try:
        v = int(str(raw).strip())
    except ValueError:
        raise bad_option(name, f"must be an integer, got {raw!r}") from None
    if v < minimum:
        raise bad_option(name, f"must be >= {minimum}, got {v}")
    return v


def min_partitions(options: Mapping[str, Any]) -> int:
    """``option("minPartitions")``: the fewest parts a read of a store is split into
    (while its streams have snapshot nodes to split), so that a read smaller than
    ``rowsPerPartition`` still keeps every core busy. Default: the cores of the machine
    that plans the read (the driver's; set it to the cluster's cores elsewhere)."""
    return int_option(options, "minPartitions", os.cpu_count() or 1, 1) or 1


def per_stream_parts(min_parts: int, streams: int) -> int:
    """Each stream's share of ``min_parts`` (a read of many streams already has parts)."""
    return max(1, -(-min_parts // max(1, streams)))


def bool_option(options: Mapping[str, Any], name: str, default: bool) -> bool:
    raw = get_option(options, name)
    if raw is None:
        return default
    s = str(raw).strip().lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise bad_option(name, f"must be true or false, got {raw!r}")


def stream_keys(options: Mapping[str, Any]) -> List[str]:
    """The ``stream`` option, or the ``streams`` option (a JSON list of keys)."""
    many = get_option(options, "streams")
    one = get_option(options, "stream")
    if many is not None and one is not None:
        raise bad_option("streams", 'and option("stream") are both set: give one')
    if many is not None:
        try:
            keys = json.loads(many)
        except ValueError:
            raise bad_option("streams", f"must be a JSON list of keys, got {many!r}") from None
        if isinstance(keys, str):
            keys = [keys]
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise bad_option("streams", f"must be a non-empty JSON list of keys, got {many!r}")
        if len(set(keys)) != len(keys):
            raise bad_option("streams", f"names a stream twice: {many!r}")
        return keys
    if one is None or str(one) == "":
        raise ValueError('xstreams: give option("stream", <key>) or option("streams", <JSON list>)')
    return [str(one)]


def target(options: Mapping[str, Any]) -> Tuple[Optional[str], Optional[str]]:
    """``(path, url)``: exactly one of the two options, checked."""
    path = get_option(options, "path")
    url = get_option(options, "url")
    if path and url:
        raise bad_option("url", 'and option("path") are both set: give one')
    if not path and not url:
        raise ValueError(
            'xstreams: give option("path", <store directory>) or option("url", "redis://host:port")'
        )
    if url is not None:
        u = str(url)
        if not (u.startswith("redis://") or u.startswith("rediss://") or u.startswith("unix://")):
            raise bad_option("url", f"must be redis://host:port[/db], got {u!r}")
        return None, u
    return os.path.abspath(str(path)), None


# ------------------------------------------------------------------------------------ IDs


def parse_id(s: str, name: str = "startingId") -> Tuple[int, int]:
    """``"ms-seq"`` or ``"ms"`` as a pair; a bad one raises naming option ``name``."""
    text = str(s).strip()
    ms, sep, seq = text.partition("-")
    try:
        a, b = int(ms), (int(seq) if sep else 0)
    except ValueError:
        raise bad_option(name, f"must be 0, $ or a stream ID (ms-seq), got {s!r}") from None
    if a < 0 or b < 0 or a >= 1 << 64 or b >= 1 << 64:
        raise bad_option(name, f"must be 0, $ or a stream ID (ms-seq), got {s!r}")
    return a, b


def id_text(pair: Tuple[int, int]) -> str:
    return f"{pair[0]}-{pair[1]}"


def id_max(a: str, b: str) -> str:
    return a if parse_id(a) >= parse_id(b) else b


def as_text(v: Any) -> str:
    return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)


# ------------------------------------------------------------------- Arrow -> XADD args


def _column_values(col: Any) -> List[Optional[bytes]]:
    """One Arrow column as XADD arguments, as ``xadd_batch`` converts them (None: null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_dictionary(t):
        col = (
            col.dictionary_decode() if hasattr(col, "dictionary_decode") else col.cast(t.value_type)
        )
        t = col.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return [None if v is None else v.encode() for v in col.to_pylist()]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return col.to_pylist()
    if pa.types.is_boolean(t):
        return [None if v is None else (b"1" if v else b"0") for v in col.to_pylist()]
    if pa.types.is_integer(t):
        return [None if v is None else str(v).encode() for v in col.to_pylist()]
    if pa.types.is_floating(t):
        return [None if v is None else _float_arg(v) for v in col.to_pylist()]
    text = pc.cast(col, pa.string())
    return [None if v is None else v.encode() for v in text.to_pylist()]


def _float_arg(v: float) -> bytes:
    if math.isinf(v):
        return b"inf" if v > 0 else b"-inf"
    return repr(float(v)).encode()


def _map_pairs(col: Any) -> List[Optional[List[Tuple[Any, Any]]]]:
    out = []
    for m in col.to_pylist():
        out.append(None if m is None else [(k, v) for k, v in m])
    return out


def _arg(v: Any) -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, bool):
        return b"1" if v else b"0"
    if isinstance(v, float):
        return _float_arg(v)
    return str(v).encode()


class RowShape:
    """How the sink turns a row into ``XADD``: the field columns (or a ``fields`` map
    column), the IDMP producer and iid columns, and the trimming options."""

    def __init__(self, options: Mapping[str, Any], columns: List[str]) -> None:
        self.key_column = get_option(options, "keyColumn")
        if self.key_column is not None and self.key_column not in columns:
            raise bad_option(
                "keyColumn", f"names column {self.key_column!r}, which is not in {columns}"
            )
        self.producer = get_option(options, "producer")
        self.iid = get_option(options, "iid")
        if (self.producer is None) != (self.iid is None):
            missing = "iid" if self.iid is None else "producer"
            raise bad_option(
                missing, 'is needed too: IDMP takes option("producer") and option("iid")'
            )
        for name in ("producer", "iid"):
            col = get_option(options, name)
            if col is not None and col not in columns:
                raise bad_option(name, f"names column {col!r}, which is not in {columns}")
        maxlen = int_option(options, "maxlen", None, 0)
        minid = get_option(options, "minid")
        if maxlen is not None and minid is not None:
            raise bad_option("minid", 'and option("maxlen") are both set: give one')
        approx = bool_option(options, "approximate", False)
        self.maxlen, self.minid, self.approximate = maxlen, minid, approx
        self.trim: List[bytes] = []
        if maxlen is not None:
            self.trim = [b"MAXLEN", b"~" if approx else b"=", str(maxlen).encode()]
        elif minid is not None:
            parse_id(str(minid), "minid")
            self.trim = [b"MINID", b"~" if approx else b"=", str(minid).encode()]
        # The entry's fields: the map column "fields", or every column but the key column
        # (the IDMP columns too: an entry then carries its producer and iid).
        if "fields" in columns:
            self.fields_map = True
            self.fields = ["fields"]
        else:
            self.fields_map = False
            self.fields = [c for c in columns if c != self.key_column]
            if not self.fields:
                raise bad_option("keyColumn", "leaves no column for the entries' fields")

    def xadd_batch_kwargs(self) -> Optional[dict]:
        """The same XADDs as :meth:`commands`, as ``Store.xadd_batch`` options (the typed
        XADD path in Rust, no Python per row); ``None`` for a ``fields`` map column, which
        only :meth:`commands` takes."""
        if self.fields_map:
            return None
        kw: dict = {"fields": self.fields, "approximate": self.approximate}
        if self.key_column is not None:
            kw["key_column"] = self.key_column
        if self.producer is not None:
            kw.update(producer=self.producer, iid=self.iid)
        if self.maxlen is not None:
            kw["maxlen"] = self.maxlen
        elif self.minid is not None:
            kw["minid"] = str(self.minid)
        return kw

    def packed(self, key: bytes, batch: Any, conn: Any) -> Tuple[bytes, int]:
        """The XADDs of :meth:`commands` for an Arrow batch, packed as a client sends them
        (RESP), and how many there are. Field columns are packed in Rust (no Python
        object per row); a ``fields`` map column through ``conn``'s packer."""
        if self.fields_map:
            cmds = list(self.commands(key, batch))
            return b"".join(conn.pack_commands(cmds)) if cmds else b"", len(cmds)
        from ._xstreams import _xadd_wire

        return _xadd_wire(  # type: ignore[no-any-return]
            key, batch, self.fields, producer=self.producer, iid=self.iid, trim=self.trim
        )

    def commands(self, key: bytes, batch: Any) -> Iterator[List[bytes]]:
        """``XADD`` argv of each row of an Arrow batch (or table)."""
        n = batch.num_rows
        names = batch.schema.names
        pid = _column_values(batch.column(names.index(self.producer))) if self.producer else None
        iid = _column_values(batch.column(names.index(self.iid))) if self.iid else None
        if self.fields_map:
            maps = _map_pairs(batch.column(names.index("fields")))
            cols = None
        else:
            maps = None
            cols = [(f.encode(), _column_values(batch.column(names.index(f)))) for f in self.fields]
        head = [b"XADD", key]
        for i in range(n):
            argv = list(head)
            if pid is not None and iid is not None:
                if pid[i] is None or iid[i] is None:
                    which = self.producer if pid[i] is None else self.iid
                    raise ValueError(f"xstreams sink: column {which!r} is null in a row")
                argv += [b"IDMP", pid[i], iid[i]]
            argv += self.trim
            argv.append(b"*")
            if maps is not None:
                for k, v in maps[i] or ():
                    a = _arg(v)
                    if a is not None:
                        argv += [_arg(k), a]
            else:
                for name, vals in cols:  # type: ignore[union-attr]
                    if vals[i] is not None:
                        argv += [name, vals[i]]
            yield argv


def key_values(table: Any, key_column: str) -> Any:
    """The key column of a task's rows as text or binary, checked: a null or empty key
    raises ``ValueError`` naming the column and the row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(key_column)
    t = col.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_binary(t) or pa.types.is_large_binary(t)):  # fmt: skip
        col = pc.cast(col, pa.string())
    if col.null_count:
        row = pc.index(pc.is_null(col), True).as_py()
        raise ValueError(
            f'xstreams sink: option("keyColumn") column {key_column!r} is null in row {row} '
            "of a task: every row needs the key of its stream"
        )
    empty = pc.equal(pc.binary_length(col), 0)
    if pc.any(empty).as_py():
        row = pc.index(empty, True).as_py()
        raise ValueError(
            f'xstreams sink: option("keyColumn") column {key_column!r} is empty in row {row} '
            "of a task: every row needs the key of its stream"
        )
    return col


def stream_parts(table: Any, key_column: Optional[str], stream: Optional[str]) -> List[Any]:
    """``(key, rows)`` pairs of a task's rows: every row to ``stream``, or the rows of each
    value of ``key_column`` (in the order of its first row), each stream's rows in their
    order. A null or empty key raises ``ValueError``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return []
    if key_column is None:
        return [(str(stream).encode(), table)]
    col = key_values(table, key_column)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    enc = pc.dictionary_encode(col)
    codes = enc.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    cuts = np.flatnonzero(np.diff(sorted_codes)) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [len(codes)]))
    firsts = order[starts]  # each key's first row: the output follows first appearance
    values = enc.dictionary
    taken = table.take(pa.array(order))
    out = []
    for i in np.argsort(firsts, kind="stable"):
        k = values[int(sorted_codes[starts[i]])].as_py()
        out.append(
            (
                k.encode() if isinstance(k, str) else bytes(k),
                taken.slice(int(starts[i]), int(ends[i] - starts[i])),
            )
        )
    return out


def marker_key(query: str, stream: str, partition: Optional[int] = None) -> str:
    """The marker stream of one sink query (and one task partition, over RESP)."""
    h = hashlib.sha1(f"{query}\0{stream}".encode()).hexdigest()[:16]
    return f"{MARKER_PREFIX}{h}" + ("" if partition is None else f":{partition}")
