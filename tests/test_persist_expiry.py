"""Key expiry in a durable store: a stream's expiry time survives a reopen, from the log
and from a snapshot (compaction); ``xstreams check`` loads it healthy and ``xstreams
dump`` shows it; a key that expired while the store ran (active or lazy expiry, logged
as a DEL) or that passes its time while the store is closed is gone after reopen; a
PERSIST is kept too."""

from __future__ import annotations

import json
from pathlib import Path

import xstreams
from persist_support import NOW, run_cli


def _open(path: Path, clock: int) -> xstreams.Store:
    return xstreams.Store(path, clock_ms=clock)


def _state(s: xstreams.Store) -> dict:
    out = {}
    for k in sorted(s.execute_command("KEYS", "*")):
        out[k] = (
            s.execute_command("TYPE", k),
            s.execute_command("PEXPIRETIME", k),
            s.execute_command("XLEN", k) if s.execute_command("TYPE", k) == b"stream" else None,
        )
    return out


def _build(path: Path, compact: bool) -> dict:
    s = _open(path, NOW)
    for key in ("keep", "lazy", "active", "closed", "persisted"):
        s.execute_command("XADD", key, "1-1", "f", "v")
        s.execute_command("XGROUP", "CREATE", key, "g", "0")
    s.execute_command("PEXPIREAT", "keep", NOW + 3_600_000)
    s.execute_command("PEXPIREAT", "lazy", NOW + 1_000)
    s.execute_command("PEXPIREAT", "active", NOW + 1_000)
    s.execute_command("PEXPIREAT", "closed", NOW + 5_000)
    s.execute_command("EXPIRE", "persisted", 100)
    s.execute_command("PERSIST", "persisted")
    s.execute_command("SET", "str", "v", "PXAT", NOW + 3_600_000)
    if compact:
        s.compact()
    s.set_clock_ms(NOW + 2_000)
    assert s.execute_command("EXISTS", "lazy") == 0  # lazily expired by this lookup
    s.execute_command("XADD", "keep", "2-1", "f", "v")  # the cron expires "active" first
    state = _state(s)
    s.close()
    return state


def _check(path: Path, compact: bool) -> None:
    before = _build(path, compact)
    assert set(before) == {b"keep", b"closed", b"persisted", b"str"}
    assert before[b"keep"] == (b"stream", NOW + 3_600_000, 2)
    assert before[b"persisted"][1] == -1
    # Reopened before "closed" reaches its time: the same keys and expiry times.
    s = _open(path, NOW + 2_000)
    assert _state(s) == before
    s.validate()
    s.close()
    r = run_cli("check", path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "result: healthy" in r.stdout
    r = run_cli("dump", path, "--format", "json")
    assert r.returncode == 0, r.stderr
    keys = {k["key"]: k for k in json.loads(r.stdout)["keys"]}
    assert keys["keep"]["expire-at-ms"] == NOW + 3_600_000
    assert keys["str"]["expire-at-ms"] == NOW + 3_600_000
    assert keys["persisted"]["expire-at-ms"] is None
    assert "lazy" not in keys and "active" not in keys
    text = run_cli("dump", path).stdout
    assert f'key "keep" stream expire-at-ms={NOW + 3_600_000}' in text
    # Reopened after "closed" passed its time: it is gone, the rest stays.
    s = _open(path, NOW + 10_000)
    after = _state(s)
    assert b"closed" not in after
    assert after[b"keep"] == before[b"keep"]
    s.close()
    s = _open(path, NOW + 10_000)
    assert _state(s) == after  # its expiry was logged: gone for good
    s.close()


def test_expiry_survives_the_log(tmp_path):
    _check(tmp_path / "s", compact=False)


def test_expiry_survives_a_snapshot(tmp_path):
    _check(tmp_path / "s", compact=True)
