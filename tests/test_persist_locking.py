"""Invariant: one writer per store directory, and a clear error naming it for the others.

A second writer - in another process or in the same one - gets ``StoreLockedError`` whose
message names the holder's pid; a read-only open works meanwhile, sees the data as of its
load and refuses writes with ``READONLY``; the lock is released by ``close()`` and when
the holder dies (even by SIGKILL), after which a writer opens normally.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import xstreams
from persist_support import child_env
from xstreams import exceptions as exc


def run_child(code: str, *args: str, timeout: float = 60) -> dict:
    """Run Python ``code`` in a child process; it prints one JSON object as its result."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


TRY_OPEN = """
import json, sys, xstreams
from xstreams import exceptions as exc
try:
    s = xstreams.Store(sys.argv[1], read_only=sys.argv[2] == "ro")
except exc.StoreLockedError as e:
    print(json.dumps({"locked": str(e), "type": type(e).__name__}))
else:
    out = {"opened": True, "xlen": s.execute_command("XLEN", "s")}
    try:
        s.execute_command("XADD", "s", "*", "f", "child")
        out["wrote"] = True
    except exc.ResponseError as e:
        out["write_error"] = e.reply
    s.close()
    print(json.dumps(out))
"""


def test_second_writer_in_another_process_is_refused_with_the_pid(tmp_path):
    path = tmp_path / "s"
    store = xstreams.Store(path, fsync="always")
    store.execute_command("XADD", "s", "*", "f", "parent")
    try:
        res = run_child(TRY_OPEN, str(path), "rw")
        assert res["type"] == "StoreLockedError"
        assert f"locked by process {os.getpid()}" in res["locked"], res
        assert str(path) in res["locked"]
        # A read-only open works meanwhile, sees the data, refuses writes.
        res = run_child(TRY_OPEN, str(path), "ro")
        assert res == {
            "opened": True,
            "xlen": 1,
            "write_error": "READONLY You can't write against a read only store.",
        }
        store.execute_command("XADD", "s", "*", "f", "parent")
        assert run_child(TRY_OPEN, str(path), "ro")["xlen"] == 2
    finally:
        store.close()
    # Released by close(): the child can write now.
    assert run_child(TRY_OPEN, str(path), "rw") == {"opened": True, "xlen": 2, "wrote": True}
    store = xstreams.Store(path, read_only=True)
    assert store.execute_command("XLEN", "s") == 3
    store.close()


def test_second_writer_in_the_same_process(tmp_path):
    path = tmp_path / "s"
    first = xstreams.Store(path)
    with pytest.raises(exc.StoreLockedError, match=f"locked by process {os.getpid()}"):
        xstreams.Store(path)
    ro = xstreams.Store(path, read_only=True)
    assert ro.read_only and not first.read_only
    with pytest.raises(exc.ResponseError) as e:
        ro.execute_command("XADD", "s", "*", "f", "v")
    assert e.value.code == "READONLY"
    with pytest.raises(exc.ResponseError):
        ro.execute_command("SET", "k", "v")
    # Reads work on the read-only store; a new write by the writer is not seen by it.
    first.execute_command("XADD", "s", "1-1", "f", "v")
    assert ro.execute_command("XLEN", "s") == 0
    ro.close()
    first.close()
    second = xstreams.Store(path)
    assert second.execute_command("XLEN", "s") == 1
    second.close()


def test_open_store_shares_one_store_per_path(tmp_path):
    path = tmp_path / "s"
    a = xstreams.open_store(path, fsync="always")
    b = xstreams.open_store(str(path) + "/")
    c = xstreams.open_store(tmp_path / "." / "s")
    assert a is b is c
    a.close()
    d = xstreams.open_store(path)
    assert d is not a and not d.closed
    d.close()


HOLD = """
import sys, time, xstreams
s = xstreams.Store(sys.argv[1], fsync="always")
s.execute_command("XADD", "s", "*", "f", "held")
print("READY", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_lock_is_released_when_the_holder_is_killed(tmp_path):
    path = tmp_path / "s"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert proc.stdout.readline().strip() == "READY", proc.stderr.read()
        with pytest.raises(exc.StoreLockedError, match=f"locked by process {proc.pid}"):
            xstreams.Store(path)
        assert (path / "LOCK").read_text().strip() == str(proc.pid)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    store = xstreams.Store(path)  # the kernel released the dead holder's lock
    try:
        assert store.execute_command("XLEN", "s") == 1
        assert (path / "LOCK").read_text().strip() == str(os.getpid())
    finally:
        store.close()


def test_read_only_open_of_a_missing_store_creates_nothing(tmp_path):
    path = tmp_path / "nothing"
    with pytest.raises(exc.StoreError, match="no xstreams store"):
        xstreams.Store(path, read_only=True)
    assert not path.exists()


def test_closed_store_refuses_commands_and_reopens(tmp_path):
    path = tmp_path / "s"
    s = xstreams.Store(path)
    s.execute_command("XADD", "s", "1-1", "f", "v")
    s.close()
    assert s.closed
    with pytest.raises(exc.XStreamsError):
        s.execute_command("XLEN", "s")
    s.close()  # idempotent
    with xstreams.Store(path) as again:
        assert again.execute_command("XLEN", "s") == 1


def test_read_only_open_never_fails_while_the_writer_compacts(tmp_path):
    import threading
    import time

    path = tmp_path / "s"
    store = xstreams.Store(path, fsync="no")
    for _ in range(3000):
        store.execute_command("XADD", "s", "*", "f", "x" * 50)
    stop = threading.Event()

    def compact_loop():
        while not stop.is_set():
            store.compact()
            store.execute_command("XADD", "s", "*", "f", "y")

    t = threading.Thread(target=compact_loop)
    t.start()
    try:
        deadline = time.monotonic() + 20
        opened = 0
        while time.monotonic() < deadline and opened < 3000:
            xstreams.Store(path, read_only=True).close()  # raises on the race
            opened += 1
    finally:
        stop.set()
        t.join()
        store.close()
