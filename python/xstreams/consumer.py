"""A consumer-group worker loop built on Redis 8.8's XREADGROUP CLAIM and XNACK.

The loop users keep writing by hand, done once:

* each read (``XREADGROUP ... CLAIM min-idle-time``) first takes NACKed entries, then
  entries other consumers left idle too long, then new entries;
* an entry the handler processes without raising is acknowledged (``XACK``);
* an exception releases the entry to the group at once (``XNACK ... FAIL``), so another
  consumer retries it without waiting for an idle timeout;
* an entry that fails on its ``max_deliveries``-th delivery, or whose handler raises
  :class:`PoisonMessage`, is marked permanently failed (``XNACK ... FATAL``) and copied to
  a dead-letter stream; whichever consumer next reads a FATAL entry makes sure it is in
  the dead-letter stream and acknowledges it;
* on shutdown every entry the consumer still holds goes back to the group without
  counting as a delivery (``XNACK ... SILENT``).

Dead-lettering is idempotent: the copy is added with ``XADD <dlq> IDMP <group> <entry-id>``,
so a crash between the copy and the acknowledgement never duplicates it.

It works with any client that has redis-py's stream methods: ``xstreams.Redis`` on an
embedded store, or ``redis.Redis`` connected to a redis-server 8.8.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

__all__ = ["Consumer", "PoisonMessage", "Delivery", "FATAL_DELIVERY_COUNT"]

#: The delivery counter of an entry released with ``XNACK ... FATAL``.
FATAL_DELIVERY_COUNT = 9223372036854775807


class PoisonMessage(Exception):
    """Raise from a handler to dead-letter the entry at once, without retries."""


@dataclass(frozen=True)
class Delivery:
    """One entry handed to the handler."""

    stream: Any
    id: Any
    fields: Dict[Any, Any]
    #: 1 for the first delivery, 2 for the first retry, ...
    attempt: int
    #: Milliseconds the entry was idle before this delivery (0 for new entries).
    idle_ms: int


@dataclass
class Stats:
    """What a consumer has done so far."""

    acked: int = 0
    failed: int = 0
    dead_lettered: int = 0
    fatal_cleared: int = 0
    released: int = 0
    reads: int = 0
    errors: List[BaseException] = field(default_factory=list)


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)


class Consumer:
    """A worker of consumer group ``group`` on ``stream``, named ``name``.

    ``client`` is an ``xstreams.Redis`` (or ``redis.Redis``) client. ``handler(delivery)``
    processes one :class:`Delivery`. ``dead_letter`` names the dead-letter stream
    (default ``"<stream>:dead"``); its entries carry the original fields plus
    ``dlq-source-id``, ``dlq-group`` and ``dlq-consumer``.
    """

    def __init__(
        self,
        client: Any,
        stream: str,
        group: str,
        name: str,
        handler: Callable[[Delivery], Any],
        *,
        min_idle_ms: int = 60_000,
        count: int = 10,
        block_ms: Optional[int] = 1_000,
        max_deliveries: int = 5,
        dead_letter: Optional[str] = None,
        create_group: bool = True,
        start_id: str = "0",
    ) -> None:
        if max_deliveries < 1:
            raise ValueError("max_deliveries must be >= 1")
        if count < 1:
            raise ValueError("count must be >= 1")
        self.client = client
        self.stream = stream
        self.group = group
        self.name = name
        self.handler = handler
        self.min_idle_ms = min_idle_ms
        self.count = count
        self.block_ms = block_ms
        self.max_deliveries = max_deliveries
        self.dead_letter = dead_letter if dead_letter is not None else f"{stream}:dead"
        self.stats = Stats()
        self._stop = threading.Event()
        if create_group:
            self._ensure_group(start_id)

    # ------------------------------------------------------------------ plumbing
    def _ensure_group(self, start_id: str) -> None:
        try:
            self.client.xgroup_create(self.stream, self.group, id=start_id, mkstream=True)
        except Exception as e:  # noqa: BLE001 - only BUSYGROUP is expected
            if "BUSYGROUP" not in str(e):
                raise

    def _dead_letter(self, entry_id: Any, fields: Dict[Any, Any]) -> None:
        payload = dict(fields)
        payload["dlq-source-id"] = entry_id
        payload["dlq-group"] = self.group
        payload["dlq-consumer"] = self.name
        self.client.xadd(self.dead_letter, payload, idmp=(self.group, _text(entry_id)))

    def _nack(self, mode: str, *ids: Any) -> int:
        return int(self.client.xnack(self.stream, self.group, mode, *ids))

    # ------------------------------------------------------------------ one step
    def poll(self) -> int:
        """Read once and process what came; returns how many entries were handled."""
        reply = self.client.xreadgroup(
            self.group,
            self.name,
            {self.stream: ">"},
            count=self.count,
            block=self.block_ms,
            claim_min_idle_time=self.min_idle_ms,
        )
        self.stats.reads += 1
        if not reply:
            return 0
        entries = reply[0][1] if isinstance(reply, list) else next(iter(reply.values()))
        handled = 0
        for entry in entries:
            entry_id, fields, idle, shown = entry[0], entry[1], int(entry[2]), int(entry[3])
            handled += 1
            if fields is None:
                continue
            if shown >= FATAL_DELIVERY_COUNT:
                # Marked permanently failed by some consumer: make sure it is in the
                # dead-letter stream, then drop it from the group.
                self._dead_letter(entry_id, fields)
                self.client.xack(self.stream, self.group, entry_id)
                self.stats.fatal_cleared += 1
                continue
            delivery = Delivery(self.stream, entry_id, fields, shown + 1, idle)
            try:
                self.handler(delivery)
            except Exception as e:  # noqa: BLE001 - the handler's failures are routed
                self.stats.errors.append(e)
                if isinstance(e, PoisonMessage) or delivery.attempt >= self.max_deliveries:
                    self._dead_letter(entry_id, fields)
                    self._nack("FATAL", entry_id)
                    self.stats.dead_lettered += 1
                else:
                    self._nack("FAIL", entry_id)
                    self.stats.failed += 1
                continue
            self.client.xack(self.stream, self.group, entry_id)
            self.stats.acked += 1
        return handled

    # ------------------------------------------------------------------ loop
    def run(self, *, max_polls: Optional[int] = None, until_idle: bool = False) -> Stats:
        """Poll until :meth:`stop` is called (from a handler or another thread), until
        ``max_polls`` reads were made, or, with ``until_idle``, until a read returns
        nothing. Releases what the consumer still holds before returning."""
        polls = 0
        try:
            while not self._stop.is_set():
                if max_polls is not None and polls >= max_polls:
                    break
                n = self.poll()
                polls += 1
                if until_idle and n == 0:
                    break
        finally:
            self.release_all()
        return self.stats

    def stop(self) -> None:
        """Ask :meth:`run` to return after the current read."""
        self._stop.set()

    def release_all(self) -> int:
        """``XNACK ... SILENT`` every entry this consumer holds (graceful shutdown)."""
        released = 0
        while True:
            pending = self.client.xpending_range(
                self.stream, self.group, min="-", max="+", count=1000, consumername=self.name
            )
            if not pending:
                break
            ids = [p["message_id"] for p in pending]
            released += self._nack("SILENT", *ids)
            if len(pending) < 1000:
                break
        self.stats.released += released
        return released

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release_all()
