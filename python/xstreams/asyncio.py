"""``xstreams.asyncio``: the drop-in replacement for ``redis.asyncio``.

``xstreams.asyncio.Redis()`` is to ``redis.asyncio.Redis`` what ``xstreams.Redis`` is to
``redis.Redis`` (see :mod:`xstreams.client.asyncio`)::

    r = xstreams.asyncio.Redis()              # was: redis.asyncio.Redis(...)
    await r.xadd("events", {"type": "click"})
    await r.xread({"events": "$"}, block=2000)
"""

from __future__ import annotations

from .client.asyncio import WAIT_SLICE, Pipeline, Redis, StrictRedis

__all__ = ["Redis", "StrictRedis", "Pipeline", "WAIT_SLICE"]
