"""The asyncio client: ``redis.asyncio.Redis``'s API over the sync client's methods.

Every command method of :class:`Redis` calls the method of the same name of
:class:`xstreams.client.sync.Redis` (native or Python, the same one path): generated for
most, written out for ``xadd`` (its two-argument call, the one made most, passes its
arguments straight on) and for ``xread``/``xreadgroup`` (their ``block``). None awaits
anything when the call cannot wait: the reply is built on the event loop's thread, with no
thread hop. What can wait runs off the loop:

- a blocking read (``xread``/``xreadgroup`` with ``block``, or ``XREAD ... BLOCK`` given to
  ``execute_command``) is started on the loop; when it must wait, it waits in short slices
  on a worker thread, so the loop keeps running and the read wakes as soon as another task
  (or thread) writes one of its keys. Cancelling the awaiting task takes the read out of
  the store's line: nothing is served to it from then on (when a slice is running, from
  the end of that slice: at most :data:`WAIT_SLICE` seconds). A read served in the instant
  before the cancellation is lost to the caller as to a client that disconnects: for
  XREADGROUP its entries stay pending for the consumer (XPENDING / XCLAIM see them);
- on a store with ``fsync="always"`` every call runs on a worker thread (its reply waits
  for the fsync);
- on a store that is not an ``xstreams.Store`` (anything with ``execute_command``), a
  blocking read runs on a worker thread.

Pipelines queue on the loop and run in one store call in ``execute()``, which awaits
nothing on an in-memory store: a task cancelled mid-pipeline leaves nothing queued in the
store and nothing watched.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import Any, AsyncIterator, Callable, Dict, List, Optional

from .._xstreams import Store as _NativeStore
from .._xstreams import _Blocked
from ..exceptions import WatchError
from .encoding import KeyT
from .pipeline import Pipeline as _SyncPipeline
from .streams import StreamCommands
from .sync import _INIT_PARAMETERS
from .sync import Redis as _SyncRedis
from .url import from_url_kwargs

__all__ = ["Redis", "StrictRedis", "Pipeline", "WAIT_SLICE"]

#: How long one wait of a blocked read lasts on its worker thread (seconds): the most a
#: cancelled read stays in the store's line after its task is cancelled.
WAIT_SLICE = 0.05

# Arguments redis.asyncio.Redis takes that redis.Redis does not.
_ASYNC_ONLY = ("auto_close_connection_pool",)


class _Recorder(StreamCommands):
    """Records the command a Python stream method builds, instead of running it."""

    def execute_command(self, *args: Any, **options: Any) -> Any:
        return args, options


_RECORDER = _Recorder()


def _blocks(args: tuple) -> bool:
    """Is ``args`` an XREAD / XREADGROUP with a BLOCK option?"""
    name = args[0]
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    if not isinstance(name, str) or name.upper() not in ("XREAD", "XREADGROUP"):
        return False
    for a in args[1:]:
        if isinstance(a, (str, bytes)) and a.upper() in ("BLOCK", b"BLOCK"):
            return True
    return False


async def _wait_blocked(handle: Any) -> Any:
    """The reply of a blocked store call, waited for off the loop (see the module doc)."""
    loop = asyncio.get_running_loop()
    try:
        while True:
            done, reply = await loop.run_in_executor(None, handle.wait, WAIT_SLICE)
            if done:
                return reply
    except BaseException:
        handle.cancel()
        raise


class Redis:
    """In-process replacement for ``redis.asyncio.Redis`` (see the module doc).

    Takes the arguments of ``redis.asyncio.Redis`` (those of :class:`xstreams.Redis`,
    plus ``auto_close_connection_pool``); command methods are coroutines returning what
    :class:`xstreams.Redis` returns.
    """

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Redis:
        """A client configured from a ``redis://host:port/db?opt=value`` URL."""
        for name in _ASYNC_ONLY:
            kwargs.pop(name, None)
        return cls(**from_url_kwargs(url, _INIT_PARAMETERS, kwargs))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for name in _ASYNC_ONLY:
            kwargs.pop(name, None)
        self._client = _SyncRedis(*args, **kwargs)
        # Whether every call runs on a worker thread: decided on the first call (the
        # default store is created lazily), fixed for the store's life.
        self._threaded: Optional[bool] = None

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__}(db={self._client.db})>"

    @property
    def sync(self) -> _SyncRedis:
        """The sync client this one runs on (same store, same settings)."""
        return self._client

    @property
    def store(self) -> Any:
        return self._client.store

    @property
    def db(self) -> int:
        return self._client.db

    @property
    def response_callbacks(self) -> Any:
        return self._client.response_callbacks

    def get_encoder(self) -> Any:
        return self._client.get_encoder()

    def get_connection_kwargs(self) -> Dict[str, Any]:
        return self._client.get_connection_kwargs()

    def set_response_callback(self, command: str, callback: Callable[..., Any]) -> None:
        self._client.set_response_callback(command, callback)

    def _off_loop(self) -> bool:
        """Must every call run on a worker thread (replies wait for an fsync)?"""
        threaded = self._threaded
        if threaded is None:
            store = self._client.store
            threaded = self._threaded = isinstance(store, _NativeStore) and store._settles
        return threaded

    async def _run_blocking(self, args: tuple, options: Dict[str, Any]) -> Any:
        """A command that may block, without blocking the loop."""
        client = self._client
        store = client.store
        if not isinstance(store, _NativeStore):
            return await asyncio.to_thread(client.execute_command, *args, **options)
        tokens = client._tokens(args)
        reply = store._start(*tokens, db=client.db, protocol=client._wire)
        if isinstance(reply, _Blocked):
            reply = await _wait_blocked(reply)
        return client._parse(args[0], reply, options)

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command; return its reply after the response callback."""
        if _blocks(args):
            return await self._run_blocking(args, options)
        if self._off_loop():
            return await asyncio.to_thread(self._client.execute_command, *args, **options)
        return self._client.execute_command(*args, **options)

    @functools.wraps(_SyncRedis.xadd)
    async def xadd(self, name: KeyT, fields: Dict[Any, Any], *args: Any, **kwargs: Any) -> Any:
        if self._threaded is False and not args and not kwargs:
            # The call a producer makes most, on a store that never waits: the sync
            # method called here with the two arguments (no argument tuple rebuilt).
            return self._client.xadd(name, fields)
        return await self._call("xadd", name, fields, *args, **kwargs)

    async def xread(
        self,
        streams: Dict[KeyT, Any],
        count: Optional[int] = None,
        block: Optional[int] = None,
        max_count: Optional[int] = None,
        max_size: Optional[int] = None,
    ) -> Any:
        """XREAD; with ``block`` the read waits without blocking the loop."""
        if block is None:
            return await self._call("xread", streams, count, block, max_count, max_size)
        args, options = _RECORDER.xread(streams, count, block, max_count, max_size)
        return await self._run_blocking(args, options)

    async def xreadgroup(
        self,
        groupname: Any,
        consumername: Any,
        streams: Dict[KeyT, Any],
        count: Optional[int] = None,
        block: Optional[int] = None,
        noack: bool = False,
        claim_min_idle_time: Optional[int] = None,
        max_count: Optional[int] = None,
        max_size: Optional[int] = None,
    ) -> Any:
        """XREADGROUP; with ``block`` the read waits without blocking the loop."""
        rest = (noack, claim_min_idle_time, max_count, max_size)
        if block is None:
            if self._threaded is False:
                # The read cannot wait: the sync method, called here (the loop of a
                # consumer calls this most).
                return self._client.xreadgroup(groupname, consumername, streams, count,
                                               None, *rest)  # fmt: skip
            return await self._call("xreadgroup", groupname, consumername, streams, count,
                                    block, *rest)  # fmt: skip
        args, options = _RECORDER.xreadgroup(groupname, consumername, streams, count, block,
                                             *rest)  # fmt: skip
        return await self._run_blocking(args, options)

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        method = getattr(self._client, name)
        if self._threaded is False or not self._off_loop():
            return method(*args, **kwargs)
        return await asyncio.to_thread(method, *args, **kwargs)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
        """A pipeline queueing commands, run by ``await pipe.execute()``."""
        return Pipeline(self, self._client.pipeline(transaction, shard_hint))

    async def transaction(
        self,
        func: Callable[[Pipeline], Any],
        *watches: KeyT,
        shard_hint: Any = None,
        value_from_callable: bool = False,
        watch_delay: Optional[float] = None,
    ) -> Any:
        """Run ``func(pipe)`` (a function or a coroutine function) as a transaction
        watching ``watches``, retrying while a watched key changes."""
        async with self.pipeline(True, shard_hint) as pipe:
            while True:
                try:
                    if watches:
                        await pipe.watch(*watches)
                    func_value = func(pipe)
                    if inspect.isawaitable(func_value):
                        func_value = await func_value
                    exec_value = await pipe.execute()
                    return func_value if value_from_callable else exec_value
                except WatchError:
                    if watch_delay is not None and watch_delay > 0:
                        await asyncio.sleep(watch_delay)
                    continue

    async def watch(self, *names: KeyT) -> None:
        """As in redis-py: WATCH belongs to a pipeline; this only warns."""
        self._client.watch(*names)

    async def unwatch(self) -> None:
        """As in redis-py: UNWATCH belongs to a pipeline; this only warns."""
        self._client.unwatch()

    async def initialize(self) -> Redis:
        return self

    def __await__(self) -> Any:
        return self.initialize().__await__()

    async def __aenter__(self) -> Redis:
        return self

    async def __aexit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        await self.aclose()

    async def aclose(self, close_connection_pool: Optional[bool] = None) -> None:
        """Nothing to release in-process; the client stays usable, as in redis-py."""
        self._client.close()

    async def close(self, close_connection_pool: Optional[bool] = None) -> None:
        """Deprecated alias of :meth:`aclose`, as in redis-py."""
        await self.aclose(close_connection_pool)

    # As redis.asyncio: no item access on an async client.
    def __getitem__(self, name: KeyT) -> Any:
        raise TypeError("Async Redis client does not support class retrieval")

    def __setitem__(self, name: KeyT, value: Any) -> None:
        raise TypeError("Async Redis client does not support class assignment")

    def __delitem__(self, name: KeyT) -> None:
        raise TypeError("Async Redis client does not support class deletion")

    def __contains__(self, name: KeyT) -> bool:
        raise TypeError("Async Redis client does not support class inclusion")

    async def scan_iter(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """SCAN as an async iterator (``match``, ``count``, ``_type`` as in redis-py)."""
        for key in self._client.scan_iter(*args, **kwargs):
            yield key


# Methods of the sync client that are not commands, or that Redis defines itself.
_NOT_COMMANDS = frozenset(
    {"pipeline", "transaction", "watch", "unwatch", "close", "from_url", "scan_iter"}
    | {"get_encoder", "get_connection_kwargs", "set_response_callback", "execute_command"}
)


def _command(name: str) -> Callable[..., Any]:
    sync_method = getattr(_SyncRedis, name)

    @functools.wraps(sync_method)
    async def method(self: Redis, *args: Any, **kwargs: Any) -> Any:
        if self._threaded is False or not self._off_loop():
            return sync_method(self._client, *args, **kwargs)
        return await asyncio.to_thread(sync_method, self._client, *args, **kwargs)

    return method


def command_names() -> List[str]:
    """The command methods of the sync client, which :class:`Redis` has as coroutines."""
    names = []
    for name in dir(_SyncRedis):
        if name.startswith("_") or name in _NOT_COMMANDS:
            continue
        attr = inspect.getattr_static(_SyncRedis, name)
        if isinstance(attr, (property, classmethod, staticmethod)):
            continue
        if callable(getattr(_SyncRedis, name)):
            names.append(name)
    return names


for _name in command_names():
    if _name not in Redis.__dict__:
        setattr(Redis, _name, _command(_name))

StrictRedis = Redis


class Pipeline:
    """``redis.asyncio``'s pipeline over the sync one: commands queue at once (the
    methods return the pipeline), ``await execute()`` runs them; after ``await
    watch(...)`` commands run at once (await them) until :meth:`multi`."""

    def __init__(self, client: Redis, pipe: _SyncPipeline) -> None:
        self._client = client
        self._pipe = pipe
        pipe._asyncio_errors = True

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__}(db={self._client.db})>"

    def __len__(self) -> int:
        return len(self._pipe)

    def __bool__(self) -> bool:
        return True

    def __await__(self) -> Any:
        return self._self().__await__()

    async def _self(self) -> Pipeline:
        return self

    async def __aenter__(self) -> Pipeline:
        return self

    async def __aexit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        await self.reset()

    @property
    def command_stack(self) -> Any:
        return self._pipe.command_stack

    @property
    def watching(self) -> bool:
        return self._pipe.watching

    @property
    def explicit_transaction(self) -> bool:
        return self._pipe.explicit_transaction

    @property
    def transaction(self) -> bool:
        return self._pipe.transaction

    def multi(self) -> None:
        self._pipe.multi()

    async def watch(self, *names: KeyT) -> bool:
        return self._pipe.watch(*names)

    async def unwatch(self) -> bool:
        return self._pipe.unwatch()

    async def reset(self) -> None:
        self._pipe.reset()

    async def aclose(self) -> None:
        self._pipe.reset()

    async def discard(self) -> None:
        self._pipe.reset()

    async def execute(self, raise_on_error: bool = True) -> List[Any]:
        """Run the queued commands; their replies in order (as the sync pipeline)."""
        if self._client._off_loop():
            return await asyncio.to_thread(self._pipe.execute, raise_on_error)
        return self._pipe.execute(raise_on_error)

    def execute_command(self, *args: Any, **options: Any) -> Any:
        return self._queued(self._pipe.execute_command(*args, **options))

    def pipeline_execute_command(self, *args: Any, **options: Any) -> Pipeline:
        self._pipe.pipeline_execute_command(*args, **options)
        return self

    def _queued(self, result: Any) -> Any:
        if result is self._pipe:
            return self
        return _ready(result)


async def _ready(value: Any) -> Any:
    return value


def _pipe_command(name: str) -> Callable[..., Any]:
    sync_method = getattr(_SyncPipeline, name)

    @functools.wraps(sync_method)
    def method(self: Pipeline, *args: Any, **kwargs: Any) -> Any:
        return self._queued(getattr(self._pipe, name)(*args, **kwargs))

    return method


for _name in command_names():
    if _name not in Pipeline.__dict__ and hasattr(_SyncPipeline, _name):
        setattr(Pipeline, _name, _pipe_command(_name))
