"""Pipelines and transactions of the redis-py compatible client.

:class:`Pipeline` queues commands and runs them together on :meth:`Pipeline.execute`
through the store's ``execute_many`` (atomically when it is a transaction). ``watch``
switches it to immediate execution until :meth:`Pipeline.multi`, as redis-py's pipeline
does; the store's ``watch(*keys, db=...)`` records the keys, and ``execute`` raises
:class:`~xstreams.exceptions.WatchError` when one of them changed meanwhile.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple

from .._xstreams import _NativePipeline
from ..exceptions import ResponseError, WatchError, XStreamsError
from .encoding import EMPTY_RESPONSE, KeyT, _safe_str
from .keyspace import KeyspaceCommands
from .server import ServerCommands
from .streams import StreamCommands

if TYPE_CHECKING:  # pragma: no cover
    from .base import ClientBase

Stack = List[Tuple[Tuple[Any, ...], Dict[str, Any]]]


def _annotate_exception(
    exception: BaseException, number: int, command: Sequence[Any], whole_args: bool = False
) -> None:
    """Prefix a pipeline error with the failing command, as redis-py does (redis.asyncio
    puts the exception's whole ``args`` tuple in the text: ``whole_args``)."""
    cmd = " ".join(map(_safe_str, command))
    short = textwrap.shorten(text=cmd, width=100, placeholder="...", break_long_words=True)
    first = exception.args if whole_args else exception.args[0] if exception.args else ""
    msg = f"Command # {number} ({short}) of pipeline caused error: {first}"
    exception.args = (msg,) + exception.args[1:]


class Pipeline(_NativePipeline, StreamCommands, KeyspaceCommands, ServerCommands):
    """Queues commands and runs them together on :meth:`execute`.

    Created by :meth:`Redis.pipeline`. Command methods return the pipeline itself, so
    calls can be chained. With ``transaction=True`` the commands run atomically. After
    :meth:`watch` commands run at once (to read what the transaction depends on) until
    :meth:`multi`; :meth:`execute` then raises ``WatchError`` if a watched key changed.
    """

    #: Error texts as redis.asyncio writes them (set by the asyncio pipeline).
    _asyncio_errors = False

    def __init__(self, client: ClientBase, transaction: bool, shard_hint: Any) -> None:
        self._client = client
        self.transaction = transaction
        self.shard_hint = shard_hint
        self.response_callbacks = client.response_callbacks
        self.command_stack: Stack = []
        self.explicit_transaction = False
        self.watching = False
        self._watches: List[Any] = []

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__}(db={self._client.db})>"

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.reset()

    def __len__(self) -> int:
        return len(self.command_stack)

    def __bool__(self) -> bool:
        """A pipeline is always true, even when empty."""
        return True

    def reset(self) -> None:
        """Forget the queued commands and the watched keys."""
        self.command_stack = []
        self.explicit_transaction = False
        self.watching = False
        self._watches = []

    def close(self) -> None:
        """Close the pipeline (same as :meth:`reset`)."""
        self.reset()

    def multi(self) -> None:
        """Start queueing the transaction (after :meth:`watch`), or make the queued
        commands run as a transaction even if ``transaction=False``."""
        if self.explicit_transaction:
            raise XStreamsError("Cannot issue nested calls to MULTI")
        if self.command_stack:
            raise XStreamsError("Commands without an initial WATCH have already been issued")
        self.explicit_transaction = True

    # -- WATCH ------------------------------------------------------------------------

    def watch(self, *names: KeyT) -> bool:
        """Watch keys ``names``: :meth:`execute` fails with ``WatchError`` if any of them
        is changed (written, deleted, expired, flushed) before it runs."""
        if self.explicit_transaction:
            raise XStreamsError("Cannot issue a WATCH after a MULTI")
        return self.execute_command("WATCH", *names)

    def unwatch(self) -> bool:
        """Forget the watched keys."""
        return self.watching and self.execute_command("UNWATCH") or True

    def immediate_execute_command(self, *args: Any, **options: Any) -> Any:
        """Run a command now (while watching, before :meth:`multi`)."""
        name = args[0]
        upper = name.upper() if isinstance(name, str) else name
        client = self._client
        if upper == "WATCH":
            store = client.store
            watch = getattr(store, "watch", None)
            if watch is None:
                raise XStreamsError("this client's store does not support WATCH")
            keys = client._pack(args)[1:]
            self._watches.append(watch(*keys, db=client.db))
            self.watching = True
            return client._parse("WATCH", b"OK", dict(options))
        if upper == "UNWATCH":
            self._watches = []
            self.watching = False
            return client._parse("UNWATCH", b"OK", dict(options))
        return client.execute_command(*args, **options)

    def execute_command(self, *args: Any, **options: Any) -> Any:
        """Queue a command and return the pipeline (run it now while watching)."""
        if (self.watching or args[0] == "WATCH") and not self.explicit_transaction:
            return self.immediate_execute_command(*args, **options)
        self.command_stack.append((args, options))
        return self

    def pipeline_execute_command(self, *args: Any, **options: Any) -> Pipeline:
        """Queue a command; return the pipeline (redis-py name)."""
        self.command_stack.append((args, options))
        return self

    # -- execution --------------------------------------------------------------------

    def execute(self, raise_on_error: bool = True) -> List[Any]:
        """Run the queued commands and return their replies in order.

        A command that fails leaves its exception in the list; with ``raise_on_error``
        (the default) the first one is raised instead, prefixed like redis-py's
        ``Command # N (...) of pipeline caused error: ...``. In a transaction, a command
        that the store rejects before running anything (unknown command, wrong number
        of arguments) aborts the whole transaction and its error is raised; a watched
        key that changed aborts it with ``WatchError``.
        """
        stack = self.command_stack
        if not stack and not self.watching:
            return []
        try:
            if self.transaction or self.explicit_transaction:
                return self._execute_transaction(stack, raise_on_error)
            return self._execute_pipeline(stack, raise_on_error)
        finally:
            self.reset()

    def _run_native(self, stack: Stack, atomic: bool) -> Any:
        """The results already converted, from the client's native pipeline path
        (``_NativeClient._pipeline_run``: one store call, redis-py's values built in Rust);
        ``None`` when it does not apply (watched keys, another store, custom callbacks)."""
        if self._watches and atomic:
            return None
        return self._client._pipeline_run(stack, atomic)

    def _run(self, stack: Stack, atomic: bool) -> Any:
        client = self._client
        commands = [tuple(client._tokens(args)) for args, _ in stack]
        if self._watches and atomic:
            results = client.store.execute_many(
                commands,
                db=client.db,
                atomic=atomic,
                protocol=client._wire,
                watch=self._watch_object(),
            )
            if results is None:
                return None
        else:
            results = client.store.execute_many(
                commands, db=client.db, atomic=atomic, protocol=client._wire
            )
        results = list(results)
        if len(results) != len(stack):
            raise ResponseError("Wrong number of response items from pipeline execution")
        return results

    def _watch_object(self) -> Any:
        """The store's Watch for the WATCH calls since the last reset (a tuple of them
        after several calls: each keeps the moment its own keys were watched)."""
        watches = self._watches
        return watches[0] if len(watches) == 1 else tuple(watches)

    def _execute_transaction(self, stack: Stack, raise_on_error: bool) -> List[Any]:
        results = self._run_native(stack, atomic=True)
        parsed = results is not None
        if not parsed:
            results = self._run(stack, atomic=True)
        if results is None:
            raise WatchError("Watched variable changed.")
        aborted = [
            i
            for i, r in enumerate(results)
            if isinstance(r, ResponseError) and getattr(r, "code", None) == "EXECABORT"
        ]
        if aborted:
            # The transaction was discarded: raise the first command's own error.
            for i, r in enumerate(results):
                if isinstance(r, BaseException) and i not in aborted:
                    _annotate_exception(r, i + 1, stack[i][0], self._asyncio_errors)
                    raise r
            raise results[aborted[0]]
        if raise_on_error:
            self._raise_first_error(stack, results)
        if parsed:
            return list(results)
        data = []
        for r, (args, options) in zip(results, stack):
            if not isinstance(r, BaseException):
                r = self._client._parse(args[0], r, dict(options))
            data.append(r)
        return data

    def _execute_pipeline(self, stack: Stack, raise_on_error: bool) -> List[Any]:
        results = self._run_native(stack, atomic=False)
        parsed = results is not None
        if not parsed:
            results = self._run(stack, atomic=False)
        if results is None:  # pragma: no cover - a store only aborts transactions
            raise WatchError("Watched variable changed.")
        responses = []
        for r, (args, options) in zip(results, stack):
            if isinstance(r, BaseException):
                if isinstance(r, ResponseError) and EMPTY_RESPONSE in options:
                    r = options[EMPTY_RESPONSE]
            elif not parsed:
                r = self._client._parse(args[0], r, dict(options))
            responses.append(r)
        if raise_on_error:
            self._raise_first_error(stack, responses)
        return responses

    def _raise_first_error(self, stack: Stack, responses: List[Any]) -> None:
        for i, r in enumerate(responses):
            if isinstance(r, BaseException):
                _annotate_exception(r, i + 1, stack[i][0], self._asyncio_errors)
                raise r
