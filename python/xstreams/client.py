"""A drop-in replacement for ``redis.Redis`` that runs against an in-process store.

``xstreams.Redis()`` has the same method names, signatures, defaults, client-side
validation and return values as redis-py 8.1's ``redis.Redis`` for the stream commands
and the basic keyspace commands, so code written for redis-py runs unchanged::

    r = xstreams.Redis()                      # was: redis.Redis(host=..., port=...)
    r.xadd("events", {"type": "click"})
    r.xread({"events": "0"}, count=10)

The client never talks to a network: every command goes to a *store* object with
``execute_command(*args, db=0, protocol=2)`` and
``execute_many(commands, db=0, atomic=True, protocol=2)``. ``Redis()`` uses the
process-wide store returned by ``xstreams.default_store()`` (two clients in one process
see the same data, as two redis-py clients connected to the same server would);
``Redis(store=...)`` uses the given one.

Replies go through the same post-processing ("response callbacks") as in redis-py.
redis-py 8.1 speaks RESP3 by default and converts the replies back to the RESP2-era
Python shapes (``legacy_responses=True``); this client asks its store for RESP3 replies
in that case too and applies the same conversions, so every value, including those of
``execute_command`` for commands without a callback, is what redis-py returns.
``protocol=2`` and ``protocol=3`` select the corresponding redis-py behaviour, and
``legacy_responses=False`` the "unified" shapes.

The client is split by concern: :mod:`xstreams.client_encoding` (types, Encoder),
:mod:`xstreams.client_callbacks` (response callbacks), the command methods in
:mod:`xstreams.client_streams`, :mod:`xstreams.client_keyspace` and
:mod:`xstreams.client_server`, and :mod:`xstreams.client_pipeline`; this module holds the
client itself and re-exports the public names.

This module imports nothing from ``redis``: it works whether or not redis-py is
installed. When it is, every exception raised here is also an instance of the matching
``redis.exceptions`` class (see :mod:`xstreams.exceptions`).
"""

from __future__ import annotations

import codecs
import inspect
import threading
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import parse_qs, unquote, urlparse

from ._xstreams import Store as _NativeStore
from ._xstreams import _NativeClient
from .client_callbacks import CaseInsensitiveDict, get_response_callbacks
from .client_encoding import (
    EMPTY_RESPONSE,
    NEVER_DECODE,
    ConsumerT,
    Encoder,
    GroupT,
    KeyT,
    ResponseCallback,
    StreamIdT,
    _decode_reply,
)
from .client_keyspace import KeyspaceCommands
from .client_pipeline import Pipeline
from .client_server import ServerCommands
from .client_streams import StreamCommands
from .exceptions import ConnectionError as XConnectionError
from .exceptions import ResponseError, WatchError, XStreamsError

__all__ = [
    "Redis",
    "StrictRedis",
    "Pipeline",
    "Encoder",
    "CaseInsensitiveDict",
    "get_response_callbacks",
    "EMPTY_RESPONSE",
    "NEVER_DECODE",
]

# The store's reply shape for the default client: redis-py 8.1 negotiates RESP3 when no
# protocol is given, and its legacy callbacks convert RESP3 replies back to RESP2 shapes.
_DEFAULT_WIRE_PROTOCOL = 3


def _to_bool(value: Any) -> Optional[bool]:
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.upper() in ("0", "F", "FALSE", "N", "NO"):
        return False
    return bool(value)


_URL_QUERY_PARSERS: Dict[str, Callable[[str], Any]] = {
    "db": int,
    "protocol": int,
    "legacy_responses": _to_bool,
    "decode_responses": _to_bool,
    "socket_timeout": float,
    "socket_connect_timeout": float,
    "socket_read_size": int,
    "socket_keepalive": _to_bool,
    "retry_on_timeout": _to_bool,
    "max_connections": int,
    "health_check_interval": int,
    "ssl_check_hostname": _to_bool,
}


def _parse_url(url: str) -> Dict[str, Any]:
    """Parse a redis://, rediss:// or unix:// URL into client keyword arguments."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(
            "Redis URL must specify one of the following schemes (redis://, rediss://, unix://)"
        )
    parsed = urlparse(url)
    kwargs: Dict[str, Any] = {}
    for name, value in parse_qs(parsed.query).items():
        if value:
            raw = value[0]
            parser = _URL_QUERY_PARSERS.get(name)
            if parser is not None:
                try:
                    kwargs[name] = parser(raw)
                except (TypeError, ValueError):
                    raise ValueError(f"Invalid value for '{name}' in connection URL.") from None
            else:
                kwargs[name] = raw
    if parsed.username:
        kwargs["username"] = unquote(parsed.username)
    if parsed.password:
        kwargs["password"] = unquote(parsed.password)
    if parsed.scheme == "unix":
        if parsed.path:
            kwargs["unix_socket_path"] = unquote(parsed.path)
    else:
        if parsed.hostname:
            kwargs["host"] = unquote(parsed.hostname)
        if parsed.port:
            kwargs["port"] = int(parsed.port)
        if parsed.path and "db" not in kwargs:
            try:
                kwargs["db"] = int(unquote(parsed.path).replace("/", ""))
            except (AttributeError, ValueError):
                pass
        if parsed.scheme == "rediss":
            kwargs["ssl"] = True
    return kwargs


def _resolve_default_store() -> Any:
    from . import default_store  # type: ignore[attr-defined]  # provided by xstreams/__init__

    return default_store()


class _PythonCommands(StreamCommands, KeyspaceCommands, ServerCommands):
    """Every command method in Python: what :class:`Redis`'s native methods fall back to
    (another store, a custom callback, an argument shape the native code leaves to
    redis-py's checks)."""


# Commands whose native method builds redis-py's value itself: a client whose callback
# for one of them is not redis-py's default takes the Python path.
_NATIVE_COMMANDS = "XADD XRANGE XREVRANGE XLEN XACK XDEL XREAD XREADGROUP DEL EXISTS TYPE".split()


class Redis(_NativeClient, StreamCommands, KeyspaceCommands, ServerCommands):
    """In-process replacement for ``redis.Redis``.

    Takes every argument ``redis.Redis`` takes, in the same order; the ones about
    networking (host, port, password, timeouts, TLS, retries, pools...) are accepted and
    ignored. ``db``, ``encoding``, ``encoding_errors``, ``decode_responses``,
    ``protocol`` and ``legacy_responses`` mean what they mean in redis-py. ``store``
    (keyword only) selects the store; by default the process-wide
    ``xstreams.default_store()``.
    """

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Redis:
        """Return a client configured from a ``redis://host:port/db?opt=value`` URL.

        The database is taken from a ``db`` query option, else from the path, else from
        ``db=``. Query options override keyword arguments, as in redis-py.
        """
        kwargs.pop("single_connection_client", None)
        url_options = _parse_url(url)
        accepted = _INIT_PARAMETERS
        for key, value in url_options.items():
            if key in accepted:
                kwargs[key] = value
        return cls(**kwargs)

    def __init__(
        self,
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        password: Optional[str] = None,
        socket_timeout: Optional[float] = None,
        socket_connect_timeout: Optional[float] = None,
        socket_read_size: int = 65536,
        socket_keepalive: Optional[bool] = True,
        socket_keepalive_options: Any = None,
        connection_pool: Any = None,
        unix_socket_path: Optional[str] = None,
        encoding: str = "utf-8",
        encoding_errors: str = "strict",
        decode_responses: bool = False,
        retry_on_timeout: bool = False,
        retry: Any = None,
        retry_on_error: Optional[List[type]] = None,
        ssl: bool = False,
        ssl_keyfile: Optional[str] = None,
        ssl_certfile: Optional[str] = None,
        ssl_cert_reqs: Any = "required",
        ssl_include_verify_flags: Any = None,
        ssl_exclude_verify_flags: Any = None,
        ssl_ca_certs: Optional[str] = None,
        ssl_ca_path: Optional[str] = None,
        ssl_ca_data: Optional[str] = None,
        ssl_check_hostname: bool = True,
        ssl_password: Optional[str] = None,
        ssl_validate_ocsp: bool = False,
        ssl_validate_ocsp_stapled: bool = False,
        ssl_ocsp_context: Any = None,
        ssl_ocsp_expected_cert: Optional[str] = None,
        ssl_min_version: Any = None,
        ssl_ciphers: Optional[str] = None,
        max_connections: Optional[int] = None,
        single_connection_client: bool = False,
        health_check_interval: int = 0,
        client_name: Optional[str] = None,
        lib_name: Any = None,
        lib_version: Any = None,
        driver_info: Any = None,
        username: Optional[str] = None,
        redis_connect_func: Optional[Callable[..., Any]] = None,
        credential_provider: Any = None,
        protocol: Optional[int] = None,
        legacy_responses: bool = True,
        cache: Any = None,
        cache_config: Any = None,
        event_dispatcher: Any = None,
        maint_notifications_config: Any = None,
        oss_cluster_maint_notifications_handler: Any = None,
        *,
        store: Any = None,
        path: Any = None,
    ) -> None:
        if connection_pool is not None:
            # Honour the settings of a redis-py pool (its connections are never used).
            pool_kwargs = getattr(connection_pool, "connection_kwargs", None) or {}
            db = pool_kwargs.get("db", db)
            encoding = pool_kwargs.get("encoding", encoding)
            encoding_errors = pool_kwargs.get("encoding_errors", encoding_errors)
            decode_responses = pool_kwargs.get("decode_responses", decode_responses)
            protocol = pool_kwargs.get("protocol", protocol)
            legacy_responses = pool_kwargs.get("legacy_responses", legacy_responses)
        if protocol is None:
            wire = _DEFAULT_WIRE_PROTOCOL
        else:
            try:
                wire = int(protocol)
            except (TypeError, ValueError):
                raise XConnectionError("protocol must be an integer") from None
            if wire < 2 or wire > 3:
                raise XConnectionError("protocol must be either 2 or 3")
        if store is None and path is not None:
            import xstreams

            store = xstreams.open_store(path)
        self._store = store
        self._store_lock = threading.Lock()
        self._db = int(db)
        self._protocol = protocol
        self._wire = wire
        self._legacy_responses = legacy_responses
        self._encoder = Encoder(encoding, encoding_errors, decode_responses)
        # With strict UTF-8 the store converts arguments itself, exactly as Encoder.encode
        # (same bytes, same DataError), so the Python loop is skipped.
        # Only an xstreams Store does that: any other store object gets packed bytes.
        codec = codecs.lookup(encoding).name
        self._utf8_strict = codec == "utf-8" and encoding_errors == "strict"
        self.response_callbacks: CaseInsensitiveDict = CaseInsensitiveDict(
            get_response_callbacks(protocol, legacy_responses)
        )

    # -- plumbing -----------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__}(db={self._db})>"

    @property
    def store(self) -> Any:
        """The store this client runs its commands on."""
        store = self._store
        if store is None:
            with self._store_lock:
                if self._store is None:
                    self._store = _resolve_default_store()
                store = self._store
        return store

    @property
    def db(self) -> int:
        """The database number all commands of this client use."""
        return self._db

    def get_encoder(self) -> Encoder:
        """Return the encoder that turns arguments into bytes and decodes replies."""
        return self._encoder

    def get_connection_kwargs(self) -> Dict[str, Any]:
        """The redis-py connection settings that still mean something in-process."""
        enc = self._encoder
        return {
            "db": self._db,
            "encoding": enc.encoding,
            "encoding_errors": enc.encoding_errors,
            "decode_responses": enc.decode_responses,
            "protocol": self._protocol,
            "legacy_responses": self._legacy_responses,
        }

    def watch(self, *names: KeyT) -> None:
        """As in redis-py: WATCH belongs to a pipeline (``r.pipeline().watch(...)``);
        this only warns."""
        warnings.warn(DeprecationWarning("Call WATCH from a Pipeline object"), stacklevel=2)

    def unwatch(self) -> None:
        """As in redis-py: UNWATCH belongs to a pipeline; this only warns."""
        warnings.warn(DeprecationWarning("Call UNWATCH from a Pipeline object"), stacklevel=2)

    def set_response_callback(self, command: str, callback: ResponseCallback) -> None:
        """Set a custom response callback for ``command``."""
        self.response_callbacks[command] = callback
        self._native_off()

    def _native_config(self) -> Optional[Tuple[Any, int, int, bool, int]]:
        """What the native methods need, or None when they must use the Python path:
        called once, on the first native call (so the default store stays lazy)."""
        if type(self).execute_command is not Redis.execute_command or not self._utf8_strict:
            return None
        store = self.store
        if not isinstance(store, _NativeStore):
            return None
        defaults = get_response_callbacks(self._protocol, self._legacy_responses)
        callbacks = self.response_callbacks
        if any(callbacks.get(name) is not defaults.get(name) for name in _NATIVE_COMMANDS):
            return None
        if not self._legacy_responses:
            shape = 2
        elif self._protocol is not None and int(self._protocol) == 3:
            shape = 1
        else:
            shape = 0
        return (store, self._db, self._wire, self._encoder.decode_responses, shape)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
        """Return a pipeline that queues commands and runs them on ``execute()``.

        With ``transaction=True`` (the default) the queued commands run atomically, as
        in MULTI/EXEC.
        """
        return Pipeline(self, transaction, shard_hint)

    def transaction(self, func: Callable[[Pipeline], Any], *watches: KeyT, **kwargs: Any) -> Any:
        """Run ``func(pipe)`` as a transaction watching ``watches``, retrying while a
        watched key changes (redis-py's ``Redis.transaction``: ``shard_hint``,
        ``value_from_callable``, ``watch_delay``)."""
        shard_hint = kwargs.pop("shard_hint", None)
        value_from_callable = kwargs.pop("value_from_callable", False)
        watch_delay = kwargs.pop("watch_delay", None)
        with self.pipeline(True, shard_hint) as pipe:
            while True:
                try:
                    if watches:
                        pipe.watch(*watches)
                    func_value = func(pipe)
                    exec_value = pipe.execute()
                    return func_value if value_from_callable else exec_value
                except WatchError:
                    if watch_delay is not None and watch_delay > 0:
                        time.sleep(watch_delay)
                    continue

    def __enter__(self) -> Redis:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release in-process; the client stays usable, as in redis-py."""

    def _tokens(self, args: Sequence[Any]) -> List[Any]:
        """The command's arguments for the store: as ``_pack`` encodes them, or (with
        strict UTF-8) left for the store to convert the same way."""
        if not (self._utf8_strict and isinstance(self.store, _NativeStore)):
            return self._pack(args)
        first = args[0]
        if isinstance(first, str):
            return [*first.encode().split(), *args[1:]]
        if isinstance(first, bytes) and b" " in first:
            return [*first.split(), *args[1:]]
        return list(args)

    def _pack(self, args: Sequence[Any]) -> List[bytes]:
        """Encode a command as redis-py would put it on the wire."""
        first = args[0]
        if isinstance(first, str):
            tokens: List[Any] = first.encode().split()
            rest = args[1:]
        elif isinstance(first, bytes) and b" " in first:
            tokens = first.split()
            rest = args[1:]
        else:
            tokens = []
            rest = args
        encode = self._encoder.encode
        tokens.extend(encode(a) for a in rest)
        return tokens

    def _parse(self, command_name: Any, response: Any, options: Dict[str, Any]) -> Any:
        """Decode a raw reply and apply the response callback, as redis-py does."""
        if NEVER_DECODE in options:
            options.pop(NEVER_DECODE)
        elif self._encoder.decode_responses:
            response = _decode_reply(
                response, self._encoder.encoding, self._encoder.encoding_errors
            )
        options.pop(EMPTY_RESPONSE, None)
        options.pop("keys", None)
        callbacks = self.response_callbacks
        if isinstance(command_name, str) and command_name in callbacks:
            return callbacks[command_name](response, **options)
        return response

    def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command and return its reply after the response callback."""
        command_name = args[0]
        tokens = self._tokens(args)
        try:
            response = self.store.execute_command(*tokens, db=self._db, protocol=self._wire)
        except ResponseError:
            if EMPTY_RESPONSE in options:
                return options[EMPTY_RESPONSE]
            raise
        return self._parse(command_name, response, options)

    # -- Arrow batch paths (xstreams extensions, not in redis-py) ------------------------

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


StrictRedis = Redis

_INIT_PARAMETERS = frozenset(inspect.signature(Redis.__init__).parameters) - {"self"}
