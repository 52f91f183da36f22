"""Shared helpers of the durable-store tests (``tests/test_persist_*.py``).

* :func:`capture` records everything observable about a store through commands, as the
  exact RESP bytes the store replies with, so two stores compare byte for byte;
* :func:`snapshot_image` reads a snapshot file without its creation time, so the
  snapshots two stores write of the same state compare byte for byte too (a snapshot holds
  what no command shows: the NACK zone order, IDMP IIDs in FIFO order, node layout, key
  expiry times, consumers' exact times);
* :func:`copy_store` copies the live files of a store another handle holds open (what a
  crash would leave behind at that moment);
* :func:`run_cli` runs ``xstreams.cli`` in a subprocess (from the source tree, so the
  tests exercise the CLI being developed even before the wheel is rebuilt).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import xstreams
from xstreams import exceptions as exc

#: A realistic Unix time in ms for pinned clocks.
NOW = 1_700_000_000_000

ROOT = Path(__file__).resolve().parent.parent
CLI_SOURCE = ROOT / "python" / "xstreams" / "cli.py"

Observation = Tuple[int, Tuple[bytes, ...], bytes]


def call(store: xstreams.Store, args: Sequence[Any], db: int = 0) -> bytes:
    """The raw RESP2 reply of one command; a caught Rust panic fails the test."""
    try:
        return bytes(store._execute_resp(list(args), db=db))
    except exc.InternalError as e:  # pragma: no cover - only on an engine bug
        raise AssertionError(f"engine panic on {args!r} (db {db}): {e}") from e


_RAX_NODES = re.compile(rb"(radix-tree-nodes\r\n:)\d+")


def _keys(store: xstreams.Store, db: int) -> List[bytes]:
    reply = store.execute_command("KEYS", "*", db=db)
    return sorted(reply)


def capture(store: xstreams.Store, dbs: Iterable[int] = range(16)) -> List[Observation]:
    """Every observable fact of the keyspace, as (db, command, raw reply) triples.

    Per database: KEYS (sorted) and DBSIZE; per stream: XINFO STREAM FULL COUNT 0 (entries,
    counters, IDMP settings and counters, groups, consumers' seen/active times, PELs with
    delivery times and counts), XRANGE, XREVRANGE, XINFO GROUPS, and per group XPENDING
    (summary and extended) and XINFO CONSUMERS (idle times: pin the clock first); per
    string: GET. Compare two captures with :func:`assert_same`.
    """
    out: List[Observation] = []

    def obs(db: int, *args: Any) -> bytes:
        a = tuple(x if isinstance(x, bytes) else str(x).encode() for x in args)
        raw = call(store, a, db)
        out.append((db, a, raw))
        return raw

    for db in dbs:
        obs(db, "DBSIZE")
        keys = _keys(store, db)
        obs(db, "KEYS", "*")  # in SCAN (creation) order: kept by snapshots and replay
        for key in keys:
            kind = store.execute_command("TYPE", key, db=db)
            out.append((db, (b"TYPE", key), kind))
            if kind == b"stream":
                info = obs(db, "XINFO", "STREAM", key, "FULL", "COUNT", "0")
                # redis-server 8.8's radix-tree-nodes depends on the tree's history (leaf
                # inlining, redis/redis#15256): a reload rebuilds the tree by insertion in
                # Redis and here alike, so the count is not a fact a reopen keeps.
                out[-1] = (db, out[-1][1], _RAX_NODES.sub(b"\\1?", info))
                obs(db, "XRANGE", key, "-", "+")
                obs(db, "XREVRANGE", key, "+", "-", "COUNT", "3")
                obs(db, "XINFO", "GROUPS", key)
                groups = store.execute_command("XINFO", "GROUPS", key, db=db)
                for g in groups:
                    name = dict(zip(g[::2], g[1::2]))[b"name"]
                    obs(db, "XPENDING", key, name)
                    obs(db, "XPENDING", key, name, "-", "+", "1000000")
                    obs(db, "XINFO", "CONSUMERS", key, name)
            else:
                obs(db, "GET", key)
    return out


def assert_same(expected: List[Observation], actual: List[Observation], what: str = "") -> None:
    """Assert two captures are equal, naming the first differing command and byte."""
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            pos = next(
                (j for j, (x, y) in enumerate(zip(e[2], a[2])) if x != y),
                min(len(e[2]), len(a[2])),
            )
            lo = max(0, pos - 400)
            raise AssertionError(
                f"{what}: state differs at observation {i}: db {e[0]} "
                f"{b' '.join(e[1])!r}, reply byte {pos}\n"
                f"  expected ...{e[2][lo : pos + 200]!r}\n  actual   ...{a[2][lo : pos + 200]!r}"
                + ("" if e[1] == a[1] else f"\n  (actual command {b' '.join(a[1])!r})")
            )
    assert len(expected) == len(actual), f"{what}: {len(expected)} vs {len(actual)} observations"


def snapshot_image(path: os.PathLike) -> bytes:
    """A snapshot file's bytes without its creation time (header bytes 16..24)."""
    data = Path(path).read_bytes()
    return data[:16] + data[24:]


def live_snapshot(store_dir: os.PathLike) -> Optional[Path]:
    """The snapshot the MANIFEST names, if any."""
    for line in (Path(store_dir) / "MANIFEST").read_text().splitlines():
        parts = line.split()
        if len(parts) == 6 and parts[5] == "b":
            return Path(store_dir) / parts[1]
    return None


def manifest_files(store_dir: os.PathLike) -> List[str]:
    """The files the MANIFEST lists, in order."""
    out = []
    for line in (Path(store_dir) / "MANIFEST").read_text().splitlines():
        parts = line.split()
        if len(parts) == 6 and parts[0] == "file":
            out.append(parts[1])
    return out


def copy_store(src: os.PathLike, dst: os.PathLike, attempts: int = 50) -> None:
    """Copy the live files of a store that may be open (and compacting) elsewhere.

    Copies MANIFEST and every file it lists, then checks the MANIFEST did not change
    meanwhile (a background compaction may switch files); retries otherwise.
    """
    src, dst = Path(src), Path(dst)
    for _ in range(attempts):
        if dst.exists():
            shutil.rmtree(dst)
        dst.mkdir(parents=True)
        manifest = (src / "MANIFEST").read_bytes()
        try:
            (dst / "MANIFEST").write_bytes(manifest)
            for name in manifest_files(dst):
                if (src / name).exists():
                    shutil.copyfile(src / name, dst / name)
        except FileNotFoundError:
            time.sleep(0.01)
            continue
        if (src / "MANIFEST").read_bytes() == manifest:
            return
        time.sleep(0.01)
    raise AssertionError(f"could not take a stable copy of {src}")


def load_cli():
    """The ``xstreams.cli`` module of the source tree (the installed wheel may predate it)."""
    name = "xstreams.cli"
    mod = sys.modules.get(name)
    if mod is not None and Path(getattr(mod, "__file__", "")) == CLI_SOURCE:
        return mod
    spec = importlib.util.spec_from_file_location(name, CLI_SOURCE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def cli_command() -> List[str]:
    """argv prefix that runs the CLI under test."""
    code = (
        "import runpy, sys; sys.argv = ['xstreams'] + sys.argv[1:]; "
        f"runpy.run_path({str(CLI_SOURCE)!r}, run_name='__main__')"
    )
    return [sys.executable, "-c", code]


def run_cli(*args: Any, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run the CLI with ``args``; returns the completed process (text output)."""
    return subprocess.run(
        cli_command() + [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def cli_inproc(*args: Any) -> Tuple[int, str, str]:
    """Run the CLI's ``main()`` in this process: (exit status, stdout, stderr)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = load_cli().main([str(a) for a in args])
        except SystemExit as e:  # argparse usage errors, --version
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def child_env() -> dict:
    """Environment of child Python processes (unbuffered output)."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_script(script: str, path: os.PathLike, *args: str, timeout: float = 60.0) -> str:
    """Run ``script`` (a Python program, dedented) in a child interpreter with ``path``
    and ``args`` as its arguments; fail the test if it fails, else return its standard
    output."""
    import textwrap

    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), os.fspath(path), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
