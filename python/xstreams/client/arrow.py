"""The Arrow batch methods of the client (xstreams extensions, not in redis-py)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ..exceptions import XStreamsError
from .encoding import ConsumerT, Encoder, GroupT, KeyT, StreamIdT


class ArrowCommands:
    """XADD / XRANGE / XREAD of whole Arrow batches on an xstreams store."""

    _encoder: Encoder
    _db: int
    store: Any

    def _arrow_store(self, method: str) -> Any:
        store = self.store
        fn = getattr(store, method, None)
        if fn is None:
            raise XStreamsError(f"this client's store has no {method}() (not an xstreams.Store)")
        return fn

    def xadd_batch(self, name: KeyT, batch: Any, **options: Any) -> Any:
        """Append the rows of ``batch`` (a pyarrow RecordBatch or Table, or a pandas
        DataFrame) to stream ``name``: one XADD per row, all under one lock, each with the
        semantics of that XADD alone. Options and result as ``Store.xadd_batch`` (a
        ``pyarrow.RecordBatch`` of ``id`` and ``duplicate``)."""
        fn = self._arrow_store("xadd_batch")
        return fn(self._encoder.encode(name), batch, db=self._db, **options)

    def xrange_arrow(
        self,
        name: KeyT,
        min: StreamIdT = "-",
        max: StreamIdT = "+",
        count: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """XRANGE as a ``pyarrow.RecordBatch`` (``id``, ``ms``, ``seq``, ``fields``; see
        ``Store.xrange_arrow`` for ``schema=`` and ``decode=``)."""
        fn = self._arrow_store("xrange_arrow")
        enc = self._encoder.encode
        return fn(enc(name), enc(min), enc(max), count, db=self._db, **options)

    def xrevrange_arrow(
        self,
        name: KeyT,
        max: StreamIdT = "+",
        min: StreamIdT = "-",
        count: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """XREVRANGE as a ``pyarrow.RecordBatch`` (newest first)."""
        fn = self._arrow_store("xrevrange_arrow")
        enc = self._encoder.encode
        return fn(enc(name), enc(max), enc(min), count, db=self._db, **options)

    def xread_arrow(
        self,
        streams: Dict[KeyT, StreamIdT],
        count: Optional[int] = None,
        block: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """XREAD as a ``pyarrow.RecordBatch`` with a ``stream`` column (empty when
        nothing arrived)."""
        fn = self._arrow_store("xread_arrow")
        enc = self._encoder.encode
        return fn({enc(k): enc(v) for k, v in streams.items()}, count, block, db=self._db,
                  **options)  # fmt: skip

    def xreadgroup_arrow(
        self,
        groupname: GroupT,
        consumername: ConsumerT,
        streams: Dict[KeyT, StreamIdT],
        count: Optional[int] = None,
        block: Optional[int] = None,
        noack: bool = False,
        **options: Any,
    ) -> Any:
        """XREADGROUP as a ``pyarrow.RecordBatch`` with a ``stream`` column (a deleted
        pending entry has null ``fields``)."""
        fn = self._arrow_store("xread_arrow")
        enc = self._encoder.encode
        return fn(
            {enc(k): enc(v) for k, v in streams.items()},
            count,
            block,
            group=enc(groupname),
            consumer=enc(consumername),
            noack=noack,
            db=self._db,
            **options,
        )
