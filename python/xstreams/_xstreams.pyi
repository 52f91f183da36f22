"""Type stubs of the compiled extension module (kept in sync with rust/xstreams-py)."""

from collections.abc import Iterable, Sequence
from os import PathLike
from types import TracebackType
from typing import Any, Literal, Mapping, Optional, Union

from typing_extensions import Self, disjoint_base, final

__version__: str
_DATA_ERRORS: dict[str, str]

_Arg = Union[bytes, str, int, float, bytearray, memoryview]

@final
class Watch:
    """Keys watched on a store (``Store.watch``), for ``execute_many(watch=...)``."""

    @property
    def keys(self) -> list[bytes]: ...
    @property
    def db(self) -> int: ...
    @property
    def dirty(self) -> bool: ...
    def unwatch(self) -> None: ...

@final
class Store:
    """An in-process store of Redis streams (see the package documentation)."""

    def __new__(
        cls,
        path: Optional[Union[str, PathLike[str]]] = None,
        *,
        config: Optional[Mapping[str, Union[str, int]]] = None,
        clock_ms: Optional[int] = None,
        fsync: Literal["always", "everysec", "no"] = "everysec",
        read_only: bool = False,
        compact_ratio: float = 1.0,
        compact_min_bytes: int = 67108864,
    ) -> Self: ...
    @property
    def path(self) -> Optional[str]: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def load_report(self) -> Optional[dict[str, Any]]: ...
    def compact(self) -> None: ...
    def flush(self) -> None: ...
    def log_writes(self) -> Optional[dict[str, Any]]: ...
    def execute_command(self, *args: _Arg, db: int = 0, protocol: Literal[2, 3] = 2) -> Any: ...
    def execute_many(
        self,
        commands: Iterable[Sequence[_Arg]],
        db: int = 0,
        atomic: bool = True,
        protocol: Literal[2, 3] = 2,
        watch: Optional[Union[Watch, Sequence[Watch]]] = None,
    ) -> Optional[list[Any]]: ...  # None: a watched key changed (EXEC's nil reply)
    def watch(self, *keys: _Arg, db: int = 0) -> Watch: ...
    def _start(self, *args: _Arg, db: int = 0, protocol: Literal[2, 3] = 2) -> Any: ...
    @property
    def _settles(self) -> bool: ...
    def _execute_resp(
        self, args: Sequence[_Arg], db: int = 0, protocol: Literal[2, 3] = 2
    ) -> bytes: ...
    def set_clock_ms(self, ms: Optional[int]) -> None: ...
    def advance_clock_ms(self, delta: int) -> None: ...
    def now_ms(self) -> int: ...
    def config_get(self, name: str) -> Optional[str]: ...
    def config_set(self, name: str, value: Union[str, int]) -> None: ...
    def validate(self) -> None: ...  # raises xstreams.InvariantError on a violation
    def sweep(self) -> None: ...
    def close(self) -> None: ...
    # Arrow batch paths (see docs/spark.md). Results are pyarrow.RecordBatch objects.
    def xadd_batch(
        self,
        key: Optional[_Arg],
        batch: Any,
        *,
        fields: Optional[Union[str, Sequence[str]]] = None,
        id: Optional[str] = None,
        producer: Optional[str] = None,
        pid: Optional[_Arg] = None,
        iid: Optional[str] = None,
        idmpauto: bool = False,
        maxlen: Optional[int] = None,
        minid: Optional[_Arg] = None,
        approximate: bool = True,
        limit: Optional[int] = None,
        nomkstream: bool = False,
        ref_policy: Optional[Literal["KEEPREF", "DELREF", "ACKED"]] = None,
        clock: Optional[str] = None,
        key_column: Optional[str] = None,
        errors: Literal["raise", "return"] = "raise",
        db: int = 0,
        atomic: bool = False,
        after: Optional[Sequence[Sequence[bytes]]] = None,
    ) -> Any: ...
    def xrange_arrow(
        self,
        key: _Arg,
        start: Optional[_Arg] = None,
        end: Optional[_Arg] = None,
        count: Optional[int] = None,
        *,
        schema: Any = None,
        decode: bool = True,
        db: int = 0,
    ) -> Any: ...
    def xrevrange_arrow(
        self,
        key: _Arg,
        end: Optional[_Arg] = None,
        start: Optional[_Arg] = None,
        count: Optional[int] = None,
        *,
        schema: Any = None,
        decode: bool = True,
        db: int = 0,
    ) -> Any: ...
    def xread_arrow(
        self,
        streams: Mapping[_Arg, _Arg],
        count: Optional[int] = None,
        block: Optional[int] = None,
        *,
        group: Optional[_Arg] = None,
        consumer: Optional[_Arg] = None,
        noack: bool = False,
        schema: Any = None,
        decode: bool = True,
        db: int = 0,
        max_count: Optional[int] = None,
        max_size: Optional[int] = None,
    ) -> Any: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Store: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None: ...

@final
class _Blocked:
    def wait(self, seconds: float) -> tuple[bool, Any]: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...

def _register_client(*, commands: Any, pipeline_execute: Any, xpending_callback: Any) -> None: ...
def command_names() -> list[str]: ...
def auto_iid(pairs: Sequence[bytes]) -> bytes: ...

@final
class _DedupOutput:
    """The output batches of a dedup kernel, each made when asked for: each input batch
    with rows left, the answer columns appended."""

    def __iter__(self) -> _DedupOutput: ...
    def __next__(self) -> Any: ...

@final
class _Dedup:
    """The dedup kernel of one spec (``xstreams.Deduper``, ``xstreams.spark.dedup``):
    each method reads Arrow record batches and answers ``None`` for input it does not
    take (then nothing changed)."""

    def __new__(
        cls,
        *,
        producer: str,
        iid: Optional[str],
        content: Optional[Sequence[str]],
        time: str,
        order: Optional[str],
        duration: int,
        maxsize: int,
        carry: bool,
    ) -> Self: ...
    def answer(self, batches: Iterable[Any], ids: bool = False) -> Optional[Any]: ...
    def answer_sorted(self, batches: Iterable[Any], ids: bool = False) -> Optional[Any]: ...
    def partition(
        self, batches: Iterable[Any], keep_first: bool, large: bool, columns: Sequence[str]
    ) -> Optional[_DedupOutput]: ...
    def partition_sorted(
        self, batches: Iterable[Any], keep_first: bool, large: bool, columns: Sequence[str]
    ) -> Optional[_DedupOutput]: ...
    def store_answers(self, batch: Any) -> Any: ...
    @property
    def producers(self) -> int: ...
    def clear(self) -> None: ...

def serve(argv: Sequence[str], on_ready: Optional[Any] = None) -> Optional[str]: ...
def inspect_store(path: Union[str, PathLike[str]]) -> dict[str, Any]:
    """Check a store directory file by file without loading it (``xstreams check``).

    Returns ``{"manifest": {"size", "problem", "snapshot", "logs"}, "files": [{"name",
    "type" ("snapshot" | "log"), "size", "ok", "problem", "summary"}], "leftovers",
    "lock_holder" (None or {"pid"}), "last_time"}``; a problem is ``{"kind" ("missing" |
    "unreadable" | "damaged" | "truncated-tail"), "offset", "message"}``. A snapshot
    summary: ``created_ms, keys, streams, strings, nodes, entries, section_count,
    sections`` (each ``{"offset", "tag", "length", "db", "key"}``); a log summary:
    ``commands, commands_by_name, selects, annotations, times, last_time, cut_at``.
    Raises ``StoreError`` when there is no store at ``path``.
    """

def key_internals(store: Store, key: bytes, db: int = 0) -> Optional[dict[str, Any]]:
    """What no command shows about a key: ``{"expire_at", "groups": [{"name",
    "delivery_order", "nack_zone"}], "producers": [{"pid", "iids": [(iid, id)]}]}``."""

# RDB files of redis-server (xstreams import / export, docs/rdb.md).
def rdb_import(store: Store, path: Union[str, PathLike[str]]) -> dict[str, Any]:
    """Restore the strings and streams of an RDB file into ``store``: ``{"keys", "version",
    "skipped": [(type, count)], "functions_skipped"}``."""

@final
class ExportProgress:
    """The keys an ``rdb_export`` has written so far (read from any thread)."""

    def __new__(cls) -> Self: ...
    @property
    def keys(self) -> int: ...

def rdb_export(
    store: Store, path: Union[str, PathLike[str]], progress: Optional[ExportProgress] = None
) -> int:
    """Write ``store`` as an RDB file redis-server 8.8 loads; returns the bytes written.

    The file is read back and checked against the store before it takes ``path``; a
    file that does not read back raises ``InternalError`` and nothing is written.
    ``progress`` counts the keys written so far."""

# Replay of persisted stores (used by xstreams.spark).
_Files = tuple[str, str, Optional[tuple[str, int]], list[tuple[str, int]]]
_Part = tuple[bytes, str, str, str, int]

def _replay_plan(
    path: Union[str, PathLike[str]],
    streams: Iterable[_Arg],
    start: Optional[_Arg] = None,
    end: Optional[_Arg] = None,
    group: Optional[_Arg] = None,
    db: int = 0,
    rows_per_part: int = 500000,
    min_parts: int = 1,
) -> tuple[_Files, list[_Part]]: ...
def _replay_read(
    files: _Files,
    part: _Part,
    group: Optional[_Arg] = None,
    db: int = 0,
    decode: bool = True,
    schema: Any = None,
    signed: bool = True,
    max_rows: int = 65536,
) -> list[Any]: ...
def _reply_arrow(
    stream: _Arg,
    entries: Sequence[Any],
    end: Optional[_Arg] = None,
    *,
    decode: bool = True,
    schema: Any = None,
    signed: bool = True,
) -> tuple[Any, int]: ...
def _xadd_wire(
    key: _Arg,
    batch: Any,
    fields: Sequence[str],
    *,
    producer: Optional[str] = None,
    iid: Optional[str] = None,
    trim: Sequence[bytes] = ...,
) -> tuple[bytes, int]: ...

class _NativePipeline:
    """Base class of ``xstreams.Pipeline``: queues the common XADD, XACK and XDEL natively."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self: ...
    def xadd(self, name: _Arg, fields: Mapping[_Arg, _Arg], *args: Any, **kwargs: Any) -> Any: ...
    def xack(self, name: _Arg, groupname: _Arg, *ids: _Arg) -> Any: ...
    def xdel(self, name: _Arg, *ids: _Arg) -> Any: ...

@disjoint_base
class _NativeClient:
    """Base class of ``xstreams.Redis``: its native command methods (see client/mod.rs)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self: ...
    def _native_off(self) -> None: ...
    def _native_on(self) -> bool: ...
    @staticmethod
    def _native_commands() -> list[str]: ...
    def _pipeline_run(self, stack: Any, atomic: bool) -> Optional[list[Any]]: ...
    def xadd(
        self,
        name: _Arg,
        fields: Mapping[_Arg, _Arg],
        id: Optional[_Arg] = None,
        maxlen: Optional[int] = None,
        approximate: Optional[bool] = None,
        nomkstream: Optional[bool] = None,
        minid: Optional[_Arg] = None,
        limit: Optional[int] = None,
        ref_policy: Optional[str] = None,
        idmpauto: Optional[_Arg] = None,
        idmp: Optional[tuple[_Arg, _Arg]] = None,
    ) -> Any: ...
    def xrange(
        self,
        name: _Arg,
        min: Optional[_Arg] = None,
        max: Optional[_Arg] = None,
        count: Optional[int] = None,
    ) -> Any: ...
    def xrevrange(
        self,
        name: _Arg,
        max: Optional[_Arg] = None,
        min: Optional[_Arg] = None,
        count: Optional[int] = None,
    ) -> Any: ...
    def xlen(self, name: _Arg) -> Any: ...
    def xack(self, name: _Arg, groupname: _Arg, *ids: _Arg) -> Any: ...
    def xdel(self, name: _Arg, *ids: _Arg) -> Any: ...
    def delete(self, *names: _Arg) -> Any: ...
    def exists(self, *names: _Arg) -> Any: ...
    def type(self, name: _Arg) -> Any: ...
    def xread(
        self,
        streams: Mapping[_Arg, _Arg],
        count: Optional[int] = None,
        block: Optional[int] = None,
        max_count: Optional[int] = None,
        max_size: Optional[int] = None,
    ) -> Any: ...
    def xreadgroup(
        self,
        groupname: _Arg,
        consumername: _Arg,
        streams: Mapping[_Arg, _Arg],
        count: Optional[int] = None,
        block: Optional[int] = None,
        noack: Optional[bool] = None,
        claim_min_idle_time: Optional[int] = None,
        max_count: Optional[int] = None,
        max_size: Optional[int] = None,
    ) -> Any: ...
    def xackdel(
        self, name: _Arg, groupname: _Arg, *ids: _Arg, ref_policy: Optional[str] = None
    ) -> Any: ...
    def xdelex(self, name: _Arg, *ids: _Arg, ref_policy: Optional[str] = None) -> Any: ...
    def xnack(
        self,
        name: _Arg,
        groupname: _Arg,
        mode: str,
        *ids: _Arg,
        retrycount: Optional[int] = None,
        force: Optional[bool] = None,
    ) -> Any: ...
    def xtrim(
        self,
        name: _Arg,
        maxlen: Optional[int] = None,
        approximate: Optional[bool] = None,
        minid: Optional[_Arg] = None,
        limit: Optional[int] = None,
        ref_policy: Optional[str] = None,
    ) -> Any: ...
    def xgroup_create(
        self,
        name: _Arg,
        groupname: _Arg,
        id: Optional[_Arg] = None,
        mkstream: Optional[bool] = None,
        entries_read: Optional[int] = None,
    ) -> Any: ...
    def xgroup_delconsumer(self, name: _Arg, groupname: _Arg, consumername: _Arg) -> Any: ...
    def xgroup_createconsumer(self, name: _Arg, groupname: _Arg, consumername: _Arg) -> Any: ...
    def xgroup_destroy(self, name: _Arg, groupname: _Arg) -> Any: ...
    def xgroup_setid(
        self, name: _Arg, groupname: _Arg, id: _Arg, entries_read: Optional[int] = None
    ) -> Any: ...
    def xcfgset(
        self, name: _Arg, idmp_duration: Optional[int] = None, idmp_maxsize: Optional[int] = None
    ) -> Any: ...
    def xinfo_groups(self, name: _Arg) -> Any: ...
    def xinfo_consumers(self, name: _Arg, groupname: _Arg) -> Any: ...
    def xinfo_stream(self, name: _Arg, full: Optional[bool] = None) -> Any: ...
    def xpending(self, name: _Arg, groupname: _Arg) -> Any: ...
    def xpending_range(
        self,
        name: _Arg,
        groupname: _Arg,
        min: Optional[_Arg],
        max: Optional[_Arg],
        count: Optional[int],
        consumername: Optional[_Arg] = None,
        idle: Optional[int] = None,
    ) -> Any: ...
    def xclaim(
        self,
        name: _Arg,
        groupname: _Arg,
        consumername: _Arg,
        min_idle_time: int,
        message_ids: Sequence[_Arg],
        idle: Optional[int] = None,
        time: Optional[int] = None,
        retrycount: Optional[int] = None,
        force: Optional[bool] = None,
        justid: Optional[bool] = None,
    ) -> Any: ...
    def xautoclaim(
        self,
        name: _Arg,
        groupname: _Arg,
        consumername: _Arg,
        min_idle_time: int,
        start_id: Optional[_Arg] = None,
        count: Optional[int] = None,
        justid: Optional[bool] = None,
    ) -> Any: ...

@final
class _ReplayStore:
    def __new__(cls, files: _Files) -> Self: ...
    def read(
        self,
        part: _Part,
        group: Optional[_Arg] = None,
        db: int = 0,
        decode: bool = True,
        schema: Any = None,
        signed: bool = True,
        max_rows: int = 65536,
    ) -> list[Any]: ...
