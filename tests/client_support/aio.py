"""A sync view of an asyncio client, so that the client suites run their cases unchanged
through ``xstreams.asyncio.Redis`` and ``redis.asyncio.Redis``.

Every method call is made on the async object and what it returns is run to completion on
the view's event loop, which runs on a thread of its own (so a test's writer thread can
call the client while the test awaits a blocking read): a coroutine is awaited, an async
iterator is collected, a pipeline
(or any object with ``execute``) gets its own view. ``with`` maps to ``async with``.
``transaction(func, ...)`` runs redis-py's loop through the views (``func`` is a sync
function of the test; the async clients' own ``transaction`` is tested with a coroutine in
``test_client_asyncio.py``). Private attributes (``_pack``...) are those of the sync client
under an xstreams async client (``.sync``).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any, Callable, Dict

from xstreams.exceptions import WatchError


class Views:
    """The event loop the views run on, and one view per async object (so that
    ``pipe.xadd(...) is pipe`` holds as in the sync client)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._views: Dict[int, Any] = {}
        self._keep: list = []

    def run(self, coro: Any) -> Any:
        """Run ``coro`` on the loop (from any thread but the loop's) and return its value."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.run(self.loop.shutdown_asyncgens())
        self.run(self.loop.shutdown_default_executor())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

    def view(self, obj: Any) -> Any:
        found = self._views.get(id(obj))
        if found is None:
            found = AwaitingView(obj, self)
            self._views[id(obj)] = found
            self._keep.append(obj)
        return found

    def settle(self, value: Any) -> Any:
        if inspect.iscoroutine(value):
            value = self.run(value)
        if inspect.isasyncgen(value):
            value = iter(self.run(_collect(value)))
        if hasattr(value, "execute") and hasattr(value, "command_stack"):
            return self.view(value)
        return value


async def _collect(agen: Any) -> list:
    return [x async for x in agen]


class AwaitingView:
    """The sync face of one async object (see the module doc)."""

    def __init__(self, target: Any, views: Views) -> None:
        self._target = target
        self._views = views

    @property  # type: ignore[misc]
    def __class__(self) -> Any:  # noqa: D105 - r.__class__(**kwargs): a view of a new client
        target, views = self._target, self._views
        return lambda *args, **kwargs: views.view(type(target)(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        target = self._target
        if name.startswith("_") and not name.startswith("__") and hasattr(target, "sync"):
            return getattr(target.sync, name)
        attr = getattr(target, name)
        if not callable(attr):
            return attr
        views = self._views

        def call(*args: Any, **kwargs: Any) -> Any:
            return views.settle(attr(*args, **kwargs))

        return call

    def __repr__(self) -> str:
        return f"<view of {self._target!r}>"

    def __len__(self) -> int:
        return len(self._target)

    def __bool__(self) -> bool:
        return bool(self._target)

    def __enter__(self) -> Any:
        return self._views.settle(self._target.__aenter__())

    def __exit__(self, *exc: Any) -> None:
        self._views.settle(self._target.__aexit__(*exc))

    def transaction(self, func: Callable[[Any], Any], *watches: Any, **kwargs: Any) -> Any:
        shard_hint = kwargs.pop("shard_hint", None)
        value_from_callable = kwargs.pop("value_from_callable", False)
        kwargs.pop("watch_delay", None)
        with self.pipeline(True, shard_hint) as pipe:
            while True:
                try:
                    if watches:
                        pipe.watch(*watches)
                    func_value = func(pipe)
                    exec_value = pipe.execute()
                    return func_value if value_from_callable else exec_value
                except WatchError:
                    continue
                except Exception as e:
                    # redis.asyncio raises redis-py's own WatchError class.
                    if type(e).__name__ == "WatchError":
                        continue
                    raise
