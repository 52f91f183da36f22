"""The consumer-group mode of the ``xstreams`` source: who delivers, who reads, who acks.

* **Planning** (driver, when Spark asks for the next batch's end) delivers nothing: a
  stream's end offset is its last entry ID (bounded by the ``AvailableNow`` ceiling), or
  under a cap the entry that fills it (XRANGE's n-th entry after the entries the
  consumers already hold); the planner keeps how many entries it expects in the range
  (:meth:`GroupReads.fresh`) for the partition to size its reads.
* **A partition** of a group read is one stream's batch, read by one consumer of the
  query (:meth:`GroupReads.owner`: one consumer, or ``consumers`` of them named
  ``<consumer>-0`` ... ``<consumer>-<k-1>``): the entries of ``(start, end]`` that
  consumer holds (``XREADGROUP ... STREAMS s <id>``, history), then ``XREADGROUP GROUP g
  <consumer> COUNT n STREAMS s >`` on the executor until an entry reaches ``end``
  (:mod:`xstreams.spark_source_server`); what a read takes past ``end`` stays pending,
  for the next batch. A re-run attempt reads back what an earlier one was delivered:
  the same rows.
* **Acks** only of batches Spark committed: at ``commit(end)``; at ``latestOffset(start)``
  (Spark asks for the next batch only after the one ending at ``start`` is in its commit
  log: this acks the last batch of an ``AvailableNow`` run, whose final look for new
  data is such a call); and, given ``option("checkpointLocation")`` (the query's), as
  soon as the checkpoint's commit log holds a batch (:class:`CommitWatcher`), which
  covers a query stopped between triggers. Each consumer's
  pending entries up to the offset are acknowledged, nothing of other consumers.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .spark_io import ZERO_ID, as_text, id_max, parse_id
from .spark_source_server import READ_CHUNK, entry_size, group_reply_entries, group_state


def _ids_between(r: Any, s: str, lo: str, hi: str, most: Optional[int]) -> List[str]:
    """IDs of up to ``most`` entries in ``(lo, hi]`` (all: None)."""
    out: List[str] = []
    while most is None or len(out) < most:
        n = READ_CHUNK if most is None else min(READ_CHUNK, most - len(out))
        got = r.execute_command("XRANGE", s, f"({lo}", hi, "COUNT", n)
        out += [as_text(e[0]) for e in got]
        if len(got) < n:
            break
        lo = out[-1]
    return out


def _within_bytes(entries: List[Any], cap: int) -> List[Any]:
    """The first entries up to the one whose bytes reach ``cap`` (at least one)."""
    acc = 0
    for i, e in enumerate(entries):
        acc += entry_size(e)
        if acc >= cap:
            return entries[: i + 1]
    return entries


# Where the server runs Lua, the driver's acks run there: XPENDING's IDs acked on the
# server, in slices Lua's unpack takes.
_LUA = {
    "ack": """
local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', ARGV[3], ARGV[4], ARGV[2])
local acked = 0
local i = 1
while i <= #p do
  local ids = {}
  for j = i, math.min(i + 999, #p) do ids[#ids + 1] = p[j][1] end
  acked = acked + redis.call('XACK', KEYS[1], ARGV[1], unpack(ids))
  i = i + 1000
end
return {#p, acked}
""",
}

#: Estimates of new entries kept for the batches planned last.
_FRESH_KEPT = 4096


class Limits:
    """What one batch may take: rows, bytes, and (under ``AvailableNow``) each stream's
    last ID when the run started. ``None``: no limit."""

    def __init__(
        self,
        rows: Optional[int] = None,
        nbytes: Optional[int] = None,
        target: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.rows = rows
        self.nbytes = nbytes
        self.target = target

    def ceiling(self, stream: str) -> Optional[str]:
        if self.target is None:
            return None
        return self.target.get(stream, ZERO_ID)


class GroupReads:
    def __init__(self, group: str, consumer: str, consumers: int, starting: str) -> None:
        self.group = group
        self.consumer = consumer
        self.names = [consumer] if consumers == 1 else [f"{consumer}-{i}" for i in range(consumers)]
        self.starting = starting
        # The scripts of _LUA (None: not registered yet; False: the server has no Lua).
        self._scripts: Any = None
        # (stream, start, end) -> new entries of a planned batch (see fresh()).
        self._fresh: Dict[Tuple[str, str, str], int] = {}

    def create(self, r: Any, streams: List[str]) -> None:
        """The group on each stream (``MKSTREAM``), at ``startingId``; an existing
        group is kept as it is."""
        import redis

        for s in streams:
            try:
                r.execute_command("XGROUP", "CREATE", s, self.group, self.starting, "MKSTREAM")
            except redis.ResponseError as e:
                if "BUSYGROUP" not in str(e):
                    raise

    def owner(self, stream: str, streams: List[str]) -> str:
        """The consumer that reads ``stream`` when the batch holds ``streams``: the
        stream's place among them, modulo the consumers (the same in every batch while
        the streams stay the same)."""
        return self.names[sorted(streams).index(stream) % len(self.names)]

    # ------------------------------------------------------------------------ planning

    def plan(
        self, r: Any, streams: List[str], start: Dict[str, str], limits: Limits
    ) -> Dict[str, str]:
        """The next batch's end offsets. Nothing is delivered here: each stream's
        partition delivers its entries on an executor (:meth:`fresh` tells it about how
        many new ones to take)."""
        rows_left = limits.rows
        bytes_left = limits.nbytes
        end = dict(start)
        for s in streams:
            if (rows_left is not None and rows_left <= 0) or (
                bytes_left is not None and bytes_left <= 0
            ):
                break
            ceiling = limits.ceiling(s)
            held = self._held(r, s, start[s], rows_left, ceiling)
            base = start[s]
            if held:
                base = id_max(base, held[-1])
                if rows_left is not None:
                    rows_left -= len(held)
                if bytes_left is not None:
                    bytes_left -= self._held_bytes(r, s, start[s], base)
            if (rows_left is not None and rows_left <= 0) or (
                bytes_left is not None and bytes_left <= 0
            ):
                end[s], n_new = base, 0
            elif rows_left is None and bytes_left is None:
                end[s], n_new = self._to_last(r, s, base, ceiling)
            else:
                end[s], n_new, nbytes = self._to_cap(r, s, base, ceiling, rows_left, bytes_left)
                if rows_left is not None:
                    rows_left -= n_new
                if bytes_left is not None:
                    bytes_left -= nbytes
            self._fresh[(s, start[s], end[s])] = len(held) + n_new
        while len(self._fresh) > _FRESH_KEPT:
            del self._fresh[next(iter(self._fresh))]
        return end

    def fresh(self, stream: str, start: str, end: str) -> Optional[int]:
        """About how many entries of ``(start, end]`` the group had yet to receive when
        the batch was planned (None: not planned by this reader)."""
        return self._fresh.get((stream, start, end))

    def count(self, r: Any, stream: str, start: str, end: str) -> int:
        """The entries of ``(start, end]`` now (for a batch planned by another reader)."""
        return len(_ids_between(r, stream, start, end, None))

    def _to_last(self, r: Any, s: str, base: str, ceiling: Optional[str]) -> Tuple[str, int]:
        """No cap: up to the stream's last entry (under ``AvailableNow``, the last one
        up to the run's ceiling); and the new entries up to it (the group's lag, less
        the entries after the ceiling)."""
        lag = group_state(r, s, self.group)[1]
        got = r.execute_command("XREVRANGE", s, ceiling or "+", "-", "COUNT", 1)
        top = id_max(base, as_text(got[0][0])) if got else base
        if top == base:
            return base, 0
        if lag is None:
            return top, len(_ids_between(r, s, base, top, None))
        if ceiling is not None:
            lag -= len(_ids_between(r, s, top, "+", lag))
        return top, max(0, lag)

    def _to_cap(
        self, r: Any, s: str, base: str, ceiling: Optional[str],
        rows: Optional[int], nbytes: Optional[int],
    ) -> Tuple[str, int, int]:  # fmt: skip
        """Under a cap: the ID of the last entry after ``base`` that fits (the n-th one
        under a row cap, XRANGE's count), how many those are and their bytes."""
        hi = ceiling or "+"
        last, n, size = base, 0, 0
        while rows is None or n < rows:
            want = READ_CHUNK if rows is None else min(READ_CHUNK, rows - n)
            if nbytes is not None:
                want = min(want, self._count_for_bytes(r, s, last, nbytes - size))
            if ceiling is not None and parse_id(ceiling) <= parse_id(last):
                break
            got = r.execute_command("XRANGE", s, f"({last}", hi, "COUNT", want)
            if nbytes is not None:
                got = _within_bytes(got, nbytes - size)
                size += sum(entry_size(e) for e in got)
            if not got:
                break
            n += len(got)
            last = as_text(got[-1][0])
            if len(got) < want or (nbytes is not None and size >= nbytes):
                break
        return last, n, size

    def holds(self, r: Any, stream: str, name: str, start: str, end: str) -> bool:
        """Whether ``name`` holds an entry of ``(start, end]``."""
        return bool(r.execute_command("XPENDING", stream, self.group, f"({start}", end, 1, name))

    def _held(
        self, r: Any, stream: str, after: str, most: Optional[int], upto: Optional[str] = None
    ) -> List[str]:
        """IDs the consumers hold after ``after`` (up to ``most`` of them, and up to
        ``upto``), sorted."""
        if upto is not None and parse_id(upto) <= parse_id(after):
            return []
        ids: List[str] = []
        count = most if most is not None else 1 << 30
        hi = upto or "+"
        for name in self.names:
            pend = r.execute_command("XPENDING", stream, self.group, f"({after}", hi, count, name)
            ids += [as_text(p[0]) for p in pend]
        ids.sort(key=parse_id)
        return ids if most is None else ids[:most]

    def _held_bytes(self, r: Any, stream: str, start: str, end: str) -> int:
        total = 0
        for name in self.names:
            cur = start
            while True:
                got = r.execute_command(
                    "XREADGROUP", "GROUP", self.group, name, "COUNT", READ_CHUNK,
                    "STREAMS", stream, cur,
                )  # fmt: skip
                entries = [e for e in group_reply_entries(got, stream)
                           if parse_id(as_text(e[0])) <= parse_id(end)]  # fmt: skip
                total += sum(entry_size(e) for e in entries if e[1] is not None)
                if len(entries) < READ_CHUNK:
                    break
                cur = as_text(entries[-1][0])
        return total

    def _count_for_bytes(self, r: Any, stream: str, after: str, left: int) -> int:
        """How many of the next entries fit in ``left`` bytes (at least 1: a batch
        always moves), from the sizes of up to 100 of them."""
        probe = r.execute_command("XRANGE", stream, f"({after}", "+", "COUNT", 100)
        acc = 0
        for i, e in enumerate(probe):
            acc += entry_size(e)
            if acc >= left:
                return i + 1
        if len(probe) < 100:
            return max(1, len(probe))
        avg = max(1, acc // len(probe))
        return max(1, left // avg)

    # ---------------------------------------------------------------------------- acks

    def ack(self, r: Any, streams: List[str], upto: Mapping[str, str]) -> int:
        """Acknowledge what each consumer holds up to ``upto`` (a committed offset)."""
        done = 0
        for s in streams:
            last = upto.get(s)
            if last is None or last == ZERO_ID:
                continue
            for name in self.names:
                while True:
                    n, acked = self._ack_chunk(r, s, name, last)
                    done += acked
                    if n < READ_CHUNK:
                        break
        return done

    def _ack_chunk(self, r: Any, stream: str, name: str, last: str) -> Tuple[int, int]:
        """XACK of up to :data:`READ_CHUNK` of ``name``'s pending entries up to ``last``:
        how many were pending, how many acked. In a script where the server runs Lua (the
        IDs stay on the server), else through the driver."""
        got = self._run_script(r, "ack", stream, [self.group, name, last, READ_CHUNK])
        if got is not None:
            return int(got[0]), int(got[1])
        pend = r.execute_command("XPENDING", stream, self.group, "-", last, READ_CHUNK, name)
        if not pend:
            return 0, 0
        return len(pend), int(r.execute_command("XACK", stream, self.group, *[p[0] for p in pend]))

    def _run_script(self, r: Any, which: str, key: str, args: List[Any]) -> Any:
        """The script ``which`` of :data:`_LUA` on ``key``'s server, or None where the
        server has no Lua (``xstreams serve``): the caller then does it itself."""
        if self._scripts is False:
            return None
        import redis

        try:
            if self._scripts is None:
                self._scripts = {k: r.register_script(v) for k, v in _LUA.items()}
            return self._scripts[which](keys=[key], args=args)
        except redis.ResponseError as e:
            if "unknown command" not in str(e).lower():
                raise
            self._scripts = False
            return None


class CommitWatcher:
    """Acknowledges each batch as soon as the query's commit log holds it: a thread of
    the driver's reader process reads ``<checkpoint>/commits`` every ``every`` seconds
    (Spark stops that process soon after ``query.stop()``, so waiting for ``stop()``
    alone could miss the last batch)."""

    def __init__(
        self,
        groups: GroupReads,
        conn_options: Mapping[str, Any],
        checkpoint: str,
        planned: Callable[[], List[Dict[str, str]]],
        every: float = 0.2,
    ) -> None:
        self.groups = groups
        self.conn_options = dict(conn_options)
        self.checkpoint = checkpoint
        self.planned = planned
        self.every = every
        self._done: Optional[Dict[str, str]] = None
        self._client: Any = None
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="xstreams-acks", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def check(self) -> None:
        """Acknowledge up to the last committed batch this reader planned, once."""
        from .spark_conn import connect

        with self._lock:
            off = committed_end(self.checkpoint, self.planned())
            if off is None or off == self._done:
                return
            if self._client is None:
                self._client = connect(self.conn_options)
            self.groups.ack(self._client, list(off), off)
            self._done = off

    def _run(self) -> None:
        while not self._halt.wait(self.every):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a server away: the next look retries
                with self._lock:
                    if self._client is not None:
                        self._client.close()
                        self._client = None

    def stop(self) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join(5)
        try:
            self.check()
        finally:
            with self._lock:
                if self._client is not None:
                    self._client.close()
                    self._client = None


def committed_end(checkpoint: str, planned: List[Dict[str, str]]) -> Optional[Dict[str, str]]:
    """The end offset of the last batch a query's checkpoint says Spark committed, when
    it is one this reader planned (Spark's offset log holds one line per source; the
    reader's own is the one equal to an offset it returned); else None."""
    commits = os.path.join(checkpoint, "commits")
    try:
        done = [int(n) for n in os.listdir(commits) if n.isdigit()]
    except OSError:
        return None
    if not done:
        return None
    try:
        with open(os.path.join(checkpoint, "offsets", str(max(done))), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines[2:]:  # a version line, the batch's metadata, then the sources
        try:
            off = json.loads(line)
        except ValueError:
            continue
        if isinstance(off, dict) and off in planned:
            return off
    return None
