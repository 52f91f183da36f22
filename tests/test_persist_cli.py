"""Invariant: ``xstreams check`` tells a healthy store from a damaged one (naming the file
and offset), fixes only a cut tail and says what it dropped, and ``xstreams dump`` prints
the exact state - what XINFO STREAM FULL shows plus the NACK zone order, the delivery
order and the IDMP producers - without modifying the store, even while it is open.

The CLI runs in a subprocess, as a user runs it (from the source tree, so the tests
exercise the code under development even before the wheel is rebuilt).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import xstreams
from persist_support import NOW, child_env, cli_inproc, live_snapshot, load_cli, run_cli


def _digest(path: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}


def make_store(path: Path, compact: bool = True) -> None:
    s = xstreams.Store(path, clock_ms=NOW, config={"stream-node-max-entries": 3})
    for i in range(1, 8):
        s.execute_command("XADD", "s", f"{i}-0", "f", f"v{i}", "g", "x")
    s.execute_command("XGROUP", "CREATE", "s", "g", "0")
    s.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", "4", "STREAMS", "s", ">")
    s.advance_clock_ms(5)
    s.execute_command("XREADGROUP", "GROUP", "g", "bob", "COUNT", "2", "STREAMS", "s", ">")
    s.execute_command("XNACK", "s", "g", "FAIL", "IDS", "2", "3-0", "1-0")
    s.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "carol")
    s.execute_command("XADD", "t", "IDMP", "p1", "first", "*", "a", "1")
    s.execute_command("XADD", "t", "IDMP", "p1", "second", "*", "a", "2")
    s.execute_command("XADD", "t", "IDMP", "p1", "first", "*", "a", "3")  # duplicate
    s.execute_command("SET", "greeting", "hello\nworld", "PXAT", NOW + 60_000)
    s.execute_command("XADD", "other", "9-9", "k", "v", db=4)
    if compact:
        s.compact()
    s.execute_command("XADD", "s", "8-0", "f", "after", "g", "compaction")
    s.close()


def test_check_healthy_store(tmp_path):
    path = tmp_path / "s"
    make_store(path)
    r = run_cli("check", path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "snapshot.2.xss" in out and "log.2.aof" in out and "MANIFEST" in out
    assert "index ok" in out and "result: healthy" in out
    assert "1 commands (XADD 1)" in out
    assert f"loaded at the last recorded time ({NOW + 5} ms): 4 live keys (db0: 3, db4: 1)" in out


def test_check_reports_and_fixes_a_cut_tail(tmp_path):
    path = tmp_path / "s"
    make_store(path)
    log = path / "log.2.aof"
    whole = log.stat().st_size
    data = log.read_bytes()
    cut_at = data.rindex(b"*")  # the last command starts here
    log.write_bytes(data[:-7])
    r = run_cli("check", path)
    assert r.returncode == 1
    dropped = whole - 7 - cut_at
    assert f"log.2.aof ends inside a command at offset {cut_at} ({dropped} bytes" in r.stdout
    assert "--fix" in r.stdout
    r = run_cli("check", path, "--fix")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"dropped the {dropped} bytes of log.2.aof from offset {cut_at}" in r.stdout
    assert log.stat().st_size == cut_at
    assert run_cli("check", path).returncode == 0


def test_check_names_the_damaged_file_and_offset_and_fix_changes_nothing(tmp_path):
    path = tmp_path / "s"
    make_store(path)
    snap = live_snapshot(path)
    sections = load_cli().inspect_store(path)["files"][0]["summary"]["sections"]
    first_key = next((s["db"], s["key"]) for s in sections if s["tag"] in ("string", "stream"))
    node = [s for s in sections if s["tag"] == "node" and (s["db"], s["key"]) == first_key][1]
    data = bytearray(snap.read_bytes())
    data[node["offset"] + 20] ^= 0x01
    snap.write_bytes(bytes(data))
    before = _digest(path)
    r = run_cli("check", path)
    assert r.returncode == 1
    assert f"{snap.name} is damaged at offset {node['offset']}: checksum mismatch" in r.stdout
    r = run_cli("check", path, "--fix")
    assert r.returncode == 1 and "nothing" in r.stdout
    assert _digest(path) == before


def test_check_reports_damage_the_engine_misses(tmp_path):
    path = tmp_path / "s"
    make_store(path)
    (path / "log.2.aof").unlink()  # listed in MANIFEST, gone
    (path / "snapshot.7.xss.tmp").write_bytes(b"left over")
    code, out, _ = cli_inproc("check", path)
    assert code == 1
    assert "log.2.aof is listed in MANIFEST but does not exist" in out
    assert "snapshot.7.xss.tmp" in out and "left over" in out
    code, out, _ = cli_inproc("check", path, "--fix")
    assert code == 1 and not (path / "log.2.aof").exists()
    code, _, err = cli_inproc("dump", path)
    assert code == 1 and "log.2.aof listed in MANIFEST but missing" in err


def test_check_works_on_a_store_open_elsewhere_and_fix_refuses(tmp_path):
    path = tmp_path / "s"
    make_store(path, compact=False)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time, xstreams\n"
         "s = xstreams.Store(sys.argv[1])\nprint('READY', flush=True)\ntime.sleep(60)",
         str(path)],
        stdout=subprocess.PIPE, text=True, env=child_env(),
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "READY"
        r = run_cli("check", path)
        assert r.returncode == 0, r.stdout
        assert f"open for writing by process {holder.pid}" in r.stdout
        log = path / "log.1.aof"
        log.write_bytes(log.read_bytes()[:-3])
        r = run_cli("check", path, "--fix")
        assert r.returncode == 1
        assert f"open for writing by process {holder.pid}" in r.stdout
        assert "nothing changed" in r.stdout
        r = run_cli("dump", path)  # dump works on a live store too
        assert r.returncode == 0 and '"s"' in r.stdout
    finally:
        holder.kill()
        holder.wait()


def test_check_usage_errors(tmp_path):
    r = run_cli("check", tmp_path / "nothing")
    assert r.returncode == 2 and "no xstreams store" in r.stderr
    assert cli_inproc("check")[0] == 2
    assert cli_inproc("check", tmp_path, "--frobnicate")[0] == 2
    assert cli_inproc()[0] == 2
    assert cli_inproc("dump", tmp_path / "nothing")[0] == 2
    assert cli_inproc("dump", tmp_path, "--db", "16")[0] == 2


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"xstreams {xstreams.__version__}"


@pytest.mark.skipif(
    importlib.util.find_spec("xstreams.cli") is None,
    reason="the installed wheel predates xstreams/cli.py (rebuild it to test `python -m`)",
)
def test_python_dash_m():
    r = subprocess.run(
        [sys.executable, "-m", "xstreams.cli", "--version"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout.startswith("xstreams ")


def test_dump_text(tmp_path):
    path = tmp_path / "s"
    make_store(path)
    before = _digest(path)
    r = run_cli("dump", path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert _digest(path) == before, "dump modified the store"
    assert 'key "greeting" string expire-at-ms=' + str(NOW + 60_000) in out
    assert 'value: "hello\\nworld"' in out
    assert '8-0 "f"="after" "g"="compaction"' in out
    assert "nack-zone (FIFO): 3-0 1-0" in out
    assert 'producer "p1" (2 IIDs, oldest first)' in out
    assert out.index('"first" ->') < out.index('"second" ->')
    assert "iids-duplicates: 1" in out
    assert "db 4" in out and '9-9 "k"="v"' in out
    assert 'consumer "carol" seen-time=' in out
    only = cli_inproc("dump", path, "--db", "4")[1]
    assert "db 4" in only and '"s"' not in only
    only = cli_inproc("dump", path, "--key", "t")[1]
    assert 'key "t" stream' in only and 'key "s"' not in only


def test_dump_json_matches_xinfo_stream_full(tmp_path):
    path = tmp_path / "s"
    make_store(path)
    r = run_cli("dump", path, "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    keys = {(k["db"], k["key"]): k for k in doc["keys"]}
    assert set(keys) == {(0, "s"), (0, "t"), (0, "greeting"), (4, "other")}
    s = xstreams.Store(path, read_only=True, clock_ms=NOW)
    try:
        for name in ("s", "t"):
            info = s.execute_command("XINFO", "STREAM", name, "FULL", "COUNT", "0", protocol=3)
            got = keys[(0, name)]
            for field, value in info.items():
                field = field.decode()
                if field in ("radix-tree-nodes",):
                    continue
                if field == "entries":
                    want = [[e[0].decode(), [x.decode() for x in e[1]]] for e in value]
                elif field == "groups":
                    want = [_group(g) for g in value]
                    got_groups = [
                        {k: v for k, v in g.items() if k not in ("nack-zone", "delivery-order")}
                        for g in got["groups"]
                    ]
                    assert got_groups == want
                    continue
                else:
                    want = value.decode() if isinstance(value, bytes) else value
                assert got[field] == want, (name, field)
        group = keys[(0, "s")]["groups"][0]
        assert group["nack-zone"] == ["3-0", "1-0"]
        assert group["delivery-order"][:2] == ["3-0", "1-0"]
        producers = keys[(0, "t")]["idmp-producers"]
        assert [p["pid"] for p in producers] == ["p1"]
        assert [iid for iid, _ in producers[0]["iids"]] == ["first", "second"]
        assert keys[(0, "greeting")]["value"] == "hello\nworld"
        assert keys[(0, "greeting")]["expire-at-ms"] == NOW + 60_000
    finally:
        s.close()


def _group(g: dict) -> dict:
    def d(v):
        return v.decode() if isinstance(v, bytes) else v

    out = {d(k): d(v) for k, v in g.items() if d(k) not in ("pending", "consumers")}
    out["pending"] = [[d(p[0]), d(p[1]) or None, p[2], p[3]] for p in g[b"pending"]]
    out["consumers"] = [
        {
            "name": d(c[b"name"]),
            "seen-time": c[b"seen-time"],
            "active-time": c[b"active-time"],
            "pel-count": c[b"pel-count"],
            "pending": [[d(p[0]), p[1], p[2]] for p in c[b"pending"]],
        }
        for c in g[b"consumers"]
    ]
    return out


def test_dump_of_binary_keys_and_values(tmp_path):
    path = tmp_path / "s"
    s = xstreams.Store(path)
    s.execute_command("XADD", b"k\xff\x00", "1-1", b"\xfe", b'q"\\')
    s.close()
    code, out, _ = cli_inproc("dump", path)
    assert code == 0
    assert 'key "k\\xff\\x00" stream' in out
    assert '1-1 "\\xfe"="q\\"\\\\"' in out
    doc = json.loads(cli_inproc("dump", path, "--format", "json")[1])
    assert doc["keys"][0]["key"] == {"hex": "6bff00"}
    assert doc["keys"][0]["entries"] == [["1-1", [{"hex": "fe"}, 'q"\\']]]


COMPACTING_WRITER = """
import sys, time, xstreams
s = xstreams.Store(sys.argv[1], fsync="no")
for i in range(3000):
    s.execute_command("XADD", "s", "*", "f", "x" * 50)
print("READY", flush=True)
while True:
    s.compact()
    s.execute_command("XADD", "s", "*", "f", "y")
    time.sleep(0.02)
"""


def test_check_of_a_store_compacting_elsewhere_stays_healthy(tmp_path):
    path = tmp_path / "s"
    writer = subprocess.Popen(
        [sys.executable, "-c", COMPACTING_WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert writer.stdout.readline().strip() == "READY"
        for _ in range(15):
            code, out, err = cli_inproc("check", path)
            assert code == 0, out + err
            assert "open for writing by process" in out
    finally:
        writer.kill()
        writer.wait()
