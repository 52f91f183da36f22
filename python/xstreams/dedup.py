"""IDMP dedup of rows, in any dataframe pipeline: :class:`Deduper`.

    import xstreams

    d = xstreams.Deduper(producer="pid", iid="iid", time="ts", duration=100)
    dup = d.duplicated(df)          # df: pandas, polars, a pyarrow Table or RecordBatch
    fresh = df[~dup]

For every row, the answer Redis gives when each producer's rows are sent to that
producer's own stream in event-time order as ``XADD <pid> IDMP <pid> <iid> * ...`` (or
``IDMPAUTO`` over content columns), with the server clock at the row's time: whether the
IID is a duplicate, and the reply's entry ID. A :class:`Deduper` keeps each producer's
state (its stream's last ID and IDMP map) between calls, so a stream of chunks (micro
batches, files, ``applyInPandas`` groups) is answered as one history.
``xstreams.spark.dedup`` runs the same kernel once per Spark partition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from ._xstreams import Store, _Dedup
from .exceptions import DataError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Deduper"]

_UNSET: Any = object()
_IDMP_MIN_DURATION, _IDMP_MAX_DURATION = 1, 86_400
_IDMP_MIN_MAXSIZE, _IDMP_MAX_MAXSIZE = 1, 10_000


def check_settings(duration: int, maxsize: int) -> None:
    """``duration`` and ``maxsize`` within the ranges a stream takes (XCFGSET's);
    ``ValueError`` otherwise."""
    if not _IDMP_MIN_DURATION <= int(duration) <= _IDMP_MAX_DURATION:
        raise ValueError(f"duration must be in [1, 86400] seconds, got {duration}")
    if not _IDMP_MIN_MAXSIZE <= int(maxsize) <= _IDMP_MAX_MAXSIZE:
        raise ValueError(f"maxsize must be in [1, 10000], got {maxsize}")


def sort_indices(table: pa.Table, columns: Sequence[str]) -> pa.Array:
    """The indices sorting ``table`` by ``columns`` ascending, nulls first (as Spark's
    ascending sort), stable: the order the dedup sends a producer's rows in."""
    import pyarrow.compute as pc

    try:  # pyarrow >= 25: null placement per key
        return pc.sort_indices(table, sort_keys=[(c, "ascending", "at_start") for c in columns])
    except (TypeError, ValueError):  # older pyarrow: one placement for the sort
        keys = [(c, "ascending") for c in columns]
        return pc.sort_indices(table, sort_keys=keys, null_placement="at_start")


def first_null(table: pa.Table, keys: Sequence[Tuple[str, Optional[str]]]) -> Optional[tuple]:
    """The first of ``keys`` ((role, column) pairs) with a null in ``table``, as
    (role, column, row), or ``None``."""
    import pyarrow.compute as pc

    for role, name in keys:
        if name is None:
            continue
        col = table.column(name)
        if col.null_count:
            return role, name, pc.index(pc.is_null(col), True).as_py()
    return None


class Deduper:
    """The IDMP dedup of rows, call after call (see the module docs).

    ``producer``, ``iid`` (or ``content``), ``time`` and ``order`` name columns:
    ``iid`` the idempotency ID (``XADD ... IDMP <pid> <iid>``), or ``content`` the
    columns whose field/value pairs ``IDMPAUTO`` hashes (a null leaves its field out);
    ``time`` the event time (ms integers, timestamps or dates); ``order`` the column
    ordering a producer's rows of equal time (default: the IID, or the content
    columns). ``duration`` (seconds, 1..86400) and ``maxsize`` (1..10000) are the
    streams' ``stream-idmp-duration`` and ``stream-idmp-maxsize``.

    Each call's rows are sent after the rows of earlier calls (a producer's clock never
    goes back: an earlier time gets the next sequence of its last ID, as XADD does);
    within a call each producer's rows go in (time, order) order. Producers are
    independent, each as on a server of its own: a producer's IIDs expire on its own
    rows' clock. Bad settings or input
    (a missing column, a null producer, IID or time, an empty IID, a row with no content
    value) raise :class:`xstreams.DataError` and leave the state as it was.
    """

    def __init__(
        self,
        *,
        producer: str = "pid",
        iid: Optional[str] = _UNSET,
        content: Optional[Sequence[str]] = None,
        time: str = "ts",
        order: Optional[str] = None,
        duration: int = 100,
        maxsize: int = 100,
    ) -> None:
        if content is not None:
            if isinstance(content, str):
                raise DataError(f"content must be a list of column names, got {content!r}")
            content = list(content)
        if iid is _UNSET:
            iid = None if content is not None else "iid"
        for role, v in (("duration", duration), ("maxsize", maxsize)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise DataError(f"{role} must be an integer, got {v!r}")
        try:
            check_settings(duration, maxsize)
        except ValueError as e:
            raise DataError(str(e)) from None
        self.producer, self.iid, self.content = producer, iid, content
        self.time, self.order = time, order
        self.duration, self.maxsize = duration, maxsize
        try:
            self._kernel = _Dedup(
                producer=producer,
                iid=iid,
                content=content,
                time=time,
                order=order,
                duration=duration,
                maxsize=maxsize,
                carry=True,
            )
        except ValueError as e:  # the spec's settings or columns
            raise DataError(str(e)) from None

    def __repr__(self) -> str:
        what = f"iid={self.iid!r}" if self.iid is not None else f"content={self.content!r}"
        return (
            f"Deduper(producer={self.producer!r}, {what}, time={self.time!r}, "
            f"order={self.order!r}, duration={self.duration}, maxsize={self.maxsize})"
        )

    @property
    def producers(self) -> int:
        """The number of producers whose state is kept."""
        return self._kernel.producers

    def reset(self) -> None:
        """Forget every producer: the next call starts from empty streams."""
        self._kernel.clear()

    def duplicated(self, data: Any) -> Any:
        """Each row's duplicate flag, in row order: a ``pandas.Series`` (with the
        frame's index) for a pandas DataFrame, a ``polars.Series`` for a polars one, else
        a ``pyarrow.BooleanArray``."""
        table, kind, index = _as_table(data)
        flags = self._answer(table, ids=False).column(0)
        if kind == "pandas":
            import pandas as pd

            return pd.Series(flags.to_numpy(zero_copy_only=False), index=index, name="duplicate")
        if kind == "polars":
            import polars as pl

            return pl.Series("duplicate", flags)
        return flags

    def answers(self, data: Any) -> Any:
        """Each row's reply, in row order: ``duplicate`` and ``entry_id`` (a new entry's
        ID, or for a duplicate the ID first recorded for its IID), as a DataFrame of the
        input's kind (pandas with the frame's index, polars) or a ``pyarrow.Table``."""
        table, kind, index = _as_table(data)
        out = self._answer(table, ids=True)
        if kind == "pandas":
            frame = out.to_pandas()
            frame.index = index
            return frame
        if kind == "polars":
            import polars as pl

            return pl.from_arrow(out)
        import pyarrow as pa

        return pa.Table.from_batches([out])

    # ------------------------------------------------------------------------ the paths

    def _ties(self) -> List[str]:
        if self.order is not None:
            return [self.order]
        return [self.iid] if self.iid is not None else list(self.content or [])

    def _answer(self, table: pa.Table, ids: bool) -> pa.RecordBatch:
        import pyarrow as pa
        import pyarrow.compute as pc

        needed = [self.producer, self.time, *([self.iid] if self.iid else [])]
        needed += [*(self.content or []), *([self.order] if self.order else [])]
        for c in needed:
            if c not in table.column_names:
                raise DataError(f"column {c!r} is not in the data")
        if pa.types.is_integer(table.schema.field(self.producer).type):
            # Producers as the keys xadd_batch makes of them: decimal text.
            i = table.column_names.index(self.producer)
            table = table.set_column(i, self.producer, pc.cast(table.column(i), pa.string()))
        out = self._kernel.answer(table.to_batches(), ids)
        if out is not None:
            return out
        keys = [("producer", self.producer), ("IID", self.iid), ("time", self.time)]
        null = first_null(table, keys)
        if null is not None:
            role, name, row = null
            raise DataError(f"dedup: the {role} column {name!r} is null on row {row}")
        idx = sort_indices(table, [self.producer, self.time, *self._ties()])
        ordered = table.take(idx)
        out = self._kernel.answer_sorted(ordered.to_batches(), ids)
        if out is not None:
            # Back to row order: row i of the input is row inverse[i] of the sorted.
            return out.take(pc.sort_indices(idx))
        raise DataError(self._refusal(ordered, idx))

    def _refusal(self, ordered: pa.Table, idx: pa.Array) -> str:
        """Why neither kernel took the rows: the store's error for the first row that
        fails as an XADD (row counted in the input), else the columns' types."""
        store = Store(
            config={"stream-idmp-duration": self.duration, "stream-idmp-maxsize": self.maxsize}
        )
        try:
            res = store.xadd_batch(
                None,
                ordered,
                key_column=self.producer,
                producer=self.producer,
                iid=self.iid,
                idmpauto=self.content is not None,
                fields=self.content if self.content is not None else [self.iid],
                clock=self.time,
                errors="return",
            )
        except Exception as e:  # a column xadd_batch cannot convert
            return f"dedup: {e}"
        finally:
            store.close()
        errors = res.column("error")
        for k in range(len(errors)):
            if errors[k].is_valid:
                return f"dedup: row {idx[k].as_py()} failed: {errors[k].as_py()}"
        types = ", ".join(f"{n}: {ordered.schema.field(n).type}" for n in
                          dict.fromkeys([self.producer, self.time, *self._ties()]))  # fmt: skip
        return f"dedup: the kernel does not take these columns ({types})"


def _as_table(data: Any) -> Tuple[pa.Table, str, Any]:
    """``data`` as a pyarrow Table, the kind of input it was, and a pandas index."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data, "arrow", None
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data]), "arrow", None
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas" and hasattr(data, "columns"):
        return pa.Table.from_pandas(data, preserve_index=False), "pandas", data.index
    if mod == "polars" and hasattr(data, "to_arrow"):
        return data.to_arrow(), "polars", None
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data), "arrow", None
    raise TypeError(
        "dedup takes a pyarrow Table or RecordBatch, a pandas or polars DataFrame, or an "
        f"object with __arrow_c_stream__; got {type(data).__name__}"
    )
