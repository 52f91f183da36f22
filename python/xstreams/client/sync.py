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

The package is split by concern (imports point one way, down this list):
:mod:`~xstreams.client.asyncio` (the asyncio client, on this one), this module (the
client), :mod:`~xstreams.client.pipeline` (pipelines, transactions, WATCH),
:mod:`~xstreams.client.base` (store, settings, one command), the command methods in
:mod:`~xstreams.client.streams`, :mod:`~xstreams.client.keyspace`,
:mod:`~xstreams.client.server` and :mod:`~xstreams.client.arrow`,
:mod:`~xstreams.client.callbacks` (response callbacks), :mod:`~xstreams.client.url` and
:mod:`~xstreams.client.encoding` (types, Encoder). :mod:`~xstreams.client.fallback` hands
the Python methods to the native layer.

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
from typing import Any, Callable, List, Optional, Tuple

from .. import _stores
from .._xstreams import Store as _NativeStore
from .._xstreams import _NativeClient
from ..exceptions import ConnectionError as XConnectionError
from ..exceptions import WatchError
from .arrow import ArrowCommands
from .base import ClientBase
from .callbacks import CaseInsensitiveDict, get_response_callbacks
from .encoding import Encoder, KeyT, ResponseCallback
from .keyspace import KeyspaceCommands
from .pipeline import Pipeline
from .server import ServerCommands
from .streams import StreamCommands
from .url import from_url_kwargs

__all__ = ["Redis", "StrictRedis"]

# The store's reply shape for the default client: redis-py 8.1 negotiates RESP3 when no
# protocol is given, and its legacy callbacks convert RESP3 replies back to RESP2 shapes.
_DEFAULT_WIRE_PROTOCOL = 3

# Commands whose native method builds redis-py's value itself: a client whose callback
# for one of them is not redis-py's default takes the Python path.
_NATIVE_COMMANDS = _NativeClient._native_commands()


class Redis(
    _NativeClient, ClientBase, ArrowCommands, StreamCommands, KeyspaceCommands, ServerCommands
):
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
        return cls(**from_url_kwargs(url, _INIT_PARAMETERS, kwargs))

    def __init__(
        self,
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        password: Optional[str] = None,
        socket_timeout: Optional[float] = 5,
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
        if not isinstance(host, str):
            # Redis(Store(...)) would otherwise run on the default store, silently.
            raise TypeError(
                f"Redis() takes its store as Redis(store=...): the first argument is "
                f"redis-py's host, a string, not a {type(host).__name__}"
            )
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
            store = _stores.open_store(path)
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


StrictRedis = Redis

_INIT_PARAMETERS = frozenset(inspect.signature(Redis.__init__).parameters) - {"self"}
