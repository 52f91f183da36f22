"""A full disk under ``appendfsync everysec`` and ``no``, against ``xstreams serve`` and,
when one is at hand (``$XSTREAMS_REDIS_SERVER``), redis-server with ``appendonly yes``:
the same assertions hold on both.

The disk "fills up" through the server process's file-size limit (``prlimit``): a log
write crossing it is cut short, as on a full device. Then, as redis-server does:

* the write command whose log write failed is answered as usual (its entry is in
  memory); the writes after it get ``MISCONF Errors writing to the AOF file: No space
  left on device`` (a short write is reported as ENOSPC) and do not run; reads go on;
  ``INFO persistence`` shows ``aof_last_write_status:err``;
* once the limit is lifted (space freed) writes are taken again by themselves, with no
  restart, and ``aof_last_write_status`` is ``ok`` again;
* (``xstreams serve``) the directory then reopens with every entry the server held, in
  order, with no repair: the record cut short was finished in the log.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import warnings
from typing import Callable, Iterator, List, Tuple

import pytest
from differential.servers import RedisServer, find_redis_server
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="prlimit (RLIMIT_FSIZE) is Linux's"
)

NO_SPACE = "MISCONF Errors writing to the AOF file: No space left on device"


def _largest_file(top: str) -> int:
    sizes = [os.path.getsize(os.path.join(d, f)) for d, _dirs, files in os.walk(top) for f in files]
    return max(sizes, default=0)


Server = Tuple[str, int, int, str, Callable[[], object]]


@pytest.fixture(params=["xstreams", "redis-server"])
def server(request, tmp_path) -> Iterator[Server]:
    """(kind, port, pid, directory, shutdown) of a server with appendfsync ``everysec``."""
    data = str(tmp_path / "data")
    os.mkdir(data)
    if request.param == "xstreams":
        require_serve()
        srv = ServerProcess("--appendfsync", "everysec", dir=data).start()
        try:
            assert srv.proc is not None
            yield "xstreams", srv.port, srv.proc.pid, data, srv.shutdown
        finally:
            srv.cleanup()
        return
    binary = find_redis_server()
    if not binary:
        pytest.skip("no redis-server binary (set XSTREAMS_REDIS_SERVER)")
    aof = ["--appendonly", "yes", "--appendfsync", "everysec"]
    with RedisServer(binary, aof, keep_ignored_signals=True) as r:
        assert r.proc is not None and r.dir is not None
        yield "redis-server", r.port, r.proc.pid, r.dir, r.stop


def _write_status(c) -> str:
    return c.info("persistence")["aof_last_write_status"]


def test_a_full_disk_refuses_writes_then_they_resume(server):
    kind, port, pid, data, shutdown = server
    c = redis.Redis(port=port)
    first = c.xadd("s", {"f": "before the limit"}).decode()
    hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]
    # Room for a few entries past the largest file (the log or the AOF increment).
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (_largest_file(data) + 1500, hard))
    acked: List[str] = []
    errors: List[str] = []
    try:
        for i in range(200):
            try:
                acked.append(c.xadd("s", {"n": str(i), "p": "x" * 100}).decode())
            except redis.ResponseError as e:
                errors.append(str(e))
                if len(errors) == 3:
                    break
        assert len(errors) == 3, f"{kind}: the limit was never reached"
        assert len(acked) >= 5, kind
        assert errors == [NO_SPACE] * 3, kind
        # The write that failed was answered (it is the last acknowledged one); the
        # refused ones did not run; reads go on.
        assert c.xlen("s") == 1 + len(acked), kind
        assert c.xrange("s", "-", "+")[-1][0].decode() == acked[-1]
        assert _write_status(c) == "err", kind
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))
    deadline = time.monotonic() + 5
    while True:
        try:
            after = c.xadd("s", {"n": "after"}).decode()
            break
        except redis.ResponseError as e:
            assert str(e) == NO_SPACE, kind
            assert time.monotonic() < deadline, f"{kind}: writes did not resume in 5 s"
            time.sleep(0.02)
    assert _write_status(c) == "ok", kind
    held = [e[0].decode() for e in c.xrange("s", "-", "+")]
    assert held == [first, *acked, after], kind
    c.close()
    if kind != "xstreams":
        return
    import xstreams
    from xstreams import exceptions as exc

    assert shutdown() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", exc.StoreRepairedWarning)  # the log is whole
        s = xstreams.Store(data)
    try:
        assert [e[0].decode() for e in s.execute_command("XRANGE", "s", "-", "+")] == held
        s.validate()
    finally:
        s.close()
