"""The ``xstreams`` command-line tool: serve, check, dump, import and export stores
(``xstreams serve`` hands over to :mod:`xstreams.server`). Exit statuses: ``EXIT_*`` below
(``xstreams --help`` lists them); long steps show progress on a terminal (``_progress``).

``xstreams check PATH [--fix]``
    Verify a store directory - the MANIFEST, every snapshot section's checksum and
    structure (including the key and node index that partial readers rely on), every
    log's syntax - then load it read-only with the engine (replaying every log) and check
    every invariant. Reports the files, their sizes, the keys and the commands found, and
    any damage with its file and offset. Exit status: 0 healthy, 1 damaged (or not
    fixable), 2 usage error (including "no store at PATH"). ``--fix`` drops the cut tail of
    the last log - the incomplete command a crash leaves behind, which a writable open
    drops too - and says what it dropped; it never changes anything else. ``check``
    works on a store another process holds open (it takes no lock); ``--fix`` needs the
    store closed.

``xstreams dump PATH [--db N] [--key K] [--format text|json]``
    Print the whole state: for each key, its type and expiry; for a string, its value;
    for a stream, what XINFO STREAM FULL shows (counters, every entry, groups,
    consumers, PELs) plus what no command shows: the NACK zone in order, the delivery
    order of the pending entries, and the IDMP producers with their IIDs in FIFO order.
    The store is loaded read-only (no lock, nothing written, so it may be open elsewhere)
    with its clock at the last time its files record, so nothing expires while dumping.

``xstreams import RDB PATH``
    Restore every string and stream of a redis-server RDB file (versions up to 8.8's,
    checksum checked) into the store at PATH, created if missing, with each key's expiry;
    keys of other types are skipped and counted. Each key goes through RESTORE, so a
    durable store logs it like any write.

``xstreams export PATH RDB``
    Write the store's keys (expired ones left out) as an RDB file that redis-server 8.8
    loads (``--dir`` / ``--dbfilename``).

The files are read by the engine only: the file-by-file check is
``xstreams._xstreams.inspect_store`` (``rust/xstreams-core/src/store/persist/inspect.rs``) and
the data comes from commands on a read-only store. The formats are described in
``docs/format.md``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from xstreams import _progress
from xstreams._store_view import read_keys

MANIFEST = "MANIFEST"

#: Exit statuses of every subcommand (``xstreams --help`` and the docs list them).
EXIT_OK = 0  # done; for check: the store is healthy
EXIT_FAILED = 1  # the store or file is damaged, or the operation failed
EXIT_USAGE = 2  # bad arguments, or no store / no file at the path given
EXIT_INTERRUPTED = 130  # Ctrl-C (as a shell reports SIGINT)

#: The settings a store keeps (``Store.config_get`` names).
SETTINGS = (
    "stream-node-max-entries",
    "stream-node-max-bytes",
    "stream-idmp-duration",
    "stream-idmp-maxsize",
)


def _import_xstreams():
    import xstreams  # noqa: PLC0415 - keep `xstreams --version` and errors cheap

    return xstreams


def inspect_store(path: os.PathLike) -> Dict[str, Any]:
    """The engine's file-by-file check of the store at ``path`` (see
    ``xstreams._xstreams.inspect_store``); raises ``StoreError`` when there is none."""
    _import_xstreams()
    from xstreams import _xstreams  # noqa: PLC0415

    return _xstreams.inspect_store(os.fspath(path))


def listed_files(info: Dict[str, Any]) -> List[str]:
    """The files the MANIFEST lists, snapshot first (empty when it is unreadable)."""
    return [f["name"] for f in info["files"]]


# ---------------------------------------------------------------------------- helpers


def _human(n: int) -> str:
    return f"{n} bytes"


def _q(b: bytes) -> str:
    """A bytes value as a double-quoted, escaped, unambiguous string."""
    out = ['"']
    for c in b:
        ch = chr(c)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif 32 <= c < 127:
            out.append(ch)
        else:
            out.append(f"\\x{c:02x}")
    out.append('"')
    return "".join(out)


def _j(b: bytes) -> Any:
    """A bytes value for JSON: a string when it is UTF-8, else {"hex": ...}."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def _jsonable(v: Any) -> Any:
    if isinstance(v, bytes):
        return _j(v)
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _no_store(command: str, path: Path) -> None:
    print(
        f"xstreams {command}: no xstreams store at {path} (no {MANIFEST} file there): give "
        "the directory a durable store was opened in (xstreams.Store(PATH), "
        "xstreams serve --dir PATH)",
        file=sys.stderr,
    )


# ---------------------------------------------------------------------------- check


class _Report:
    def __init__(self, out) -> None:
        self.out = out
        self.problems: List[str] = []
        self.cut: Optional[Tuple[str, int, int]] = None  # (file, offset, bytes)
        self.notes: List[str] = []
        #: The pid holding the writer lock (-1 when unknown), None when not held.
        self.holder: Optional[int] = None

    def line(self, text: str = "") -> None:
        print(text, file=self.out)

    def problem(self, text: str) -> None:
        self.problems.append(text)
        self.line(f"  DAMAGED: {text}")


def check_store(path: Path, out=None, attempts: int = 20) -> Tuple[int, _Report]:
    """Check the store at ``path``; returns (exit status, report).

    A writer may compact while the check runs, replacing the files it reads: when a
    problem shows up and the MANIFEST changed meanwhile, the check starts over."""
    out = out or sys.stdout
    for attempt in range(attempts):
        try:
            manifest_before = (path / MANIFEST).read_bytes()
        except OSError:
            manifest_before = None
        buf = io.StringIO()
        status, rep = _check_once(path, buf)
        try:
            changed = (path / MANIFEST).read_bytes() != manifest_before
        except OSError:
            changed = True
        if status == 0 or not changed or attempt == attempts - 1:
            break
        time.sleep(0.01 * (attempt + 1))
    out.write(buf.getvalue())
    rep.out = out
    return status, rep


def _damaged(name: str, p: Dict[str, Any]) -> str:
    return f"{name} is damaged at offset {p['offset']}: {p['message']}"


def _check_files(info: Dict[str, Any], rep: _Report) -> Optional[int]:
    """Report the engine's file-by-file check; returns the snapshot's key count."""
    snapshot_keys: Optional[int] = None
    for f in info["files"]:
        name, p, s = f["name"], f["problem"], f["summary"]
        kind = p["kind"] if p else None
        if kind == "missing":
            rep.line(f"  {name:<22} missing")
            rep.problem(f"{name} is listed in {MANIFEST} but does not exist")
            continue
        if kind == "unreadable":
            rep.problem(f"{name}: {p['message']}")
            continue
        size = _human(f["size"])
        if f["type"] == "snapshot":
            if p:
                rep.line(f"  {name:<22} {size}")
                rep.problem(_damaged(name, p))
                continue
            snapshot_keys = s["keys"]
            rep.line(
                f"  {name:<22} {size}: ok - {s['section_count']} sections, "
                f"{s['keys']} keys ({s['streams']} streams, {s['strings']} strings), "
                f"{s['nodes']} nodes, {s['entries']} entries, index ok "
                f"(created at {s['created_ms']} ms)"
            )
            continue
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(s["commands_by_name"].items()))
        summary = f"{s['commands']} commands" + (f" ({kinds})" if kinds else "")
        summary += f", {s['annotations']} annotations"
        if p is None:
            rep.line(f"  {name:<22} {size}: ok - {summary}")
        elif kind == "truncated-tail":
            off = p["offset"]
            dropped = f["size"] - off
            rep.line(f"  {name:<22} {size}: {summary} before the cut")
            rep.cut = (name, off, dropped)
            rep.problem(
                f"{name} ends inside a command at offset {off} ({dropped} bytes of an "
                "incomplete write, as a crash leaves); `check --fix` drops them "
                "(a writable open does too)"
            )
        else:
            where = "the cut" if s["cut_at"] is not None else "the damage"
            rep.line(f"  {name:<22} {size}: {summary} before {where}")
            rep.problem(_damaged(name, p))
    return snapshot_keys


def _check_once(path: Path, out) -> Tuple[int, _Report]:
    rep = _Report(out)
    rep.line(f"store {path}")
    xs = _import_xstreams()
    from xstreams import exceptions as xexc  # noqa: PLC0415

    try:
        info = _progress.step("checking files", lambda: inspect_store(path))
    except xexc.StoreError as e:
        rep.problem(str(e))
        return 1, rep
    holder = info["lock_holder"]
    if holder is not None:
        pid = holder["pid"]
        rep.holder = -1 if pid is None else pid
        who = "another process" if pid is None else f"process {pid}"
        rep.line(
            f"  open for writing by {who} (checking a live store: a write in progress "
            "can look like a cut tail)"
        )
    m = info["manifest"]
    if m["problem"] is not None:
        p = m["problem"]
        if p["kind"] == "unreadable":
            rep.problem(f"{MANIFEST}: {p['message']}")
        else:
            rep.line(f"  {MANIFEST:<22} {_human(m['size'])}")
            rep.problem(_damaged(MANIFEST, p))
        return 1, rep
    base = "no snapshot" if m["snapshot"] is None else f"snapshot {m['snapshot']}"
    rep.line(f"  {MANIFEST:<22} {_human(m['size'])}: {base}, {len(m['logs'])} log(s)")
    snapshot_keys = _check_files(info, rep)
    for o in info["leftovers"]:
        rep.line(f"  {o:<22} not in {MANIFEST} (left over; not used)")
    # The engine's own load: replays every log, checks every invariant. Keys are counted
    # as of the store's last recorded command time (not today's clock, which would expire
    # keys the store itself still holds).
    last_time = info["last_time"]
    clock = None if last_time is None else {"clock_ms": last_time}
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            store = _progress.step(
                "loading the store (replaying its logs)",
                lambda: xs.Store(path, read_only=True, **(clock or {})),
            )
        except xexc.InternalError as e:
            rep.problem(f"the engine failed (a bug, please report it): {e}")
            return 1, rep
        except xexc.StoreError as e:
            if not rep.problems:
                rep.problem(str(e))
            else:
                rep.line(f"  engine: {e}")
            return 1, rep
    try:
        report = store.load_report
        try:
            _progress.step("checking invariants", store.validate)
        except xexc.InvariantError as e:
            rep.problem(f"loaded state breaks an invariant: {e}")
        per_db = []
        total = 0
        for db in range(16):
            n = store.execute_command("DBSIZE", db=db)
            if n:
                per_db.append(f"db{db}: {n}")
                total += n
        when = "" if last_time is None else f" at the last recorded time ({last_time} ms)"
        rep.line(
            f"  loaded{when}: {total} live keys"
            + (f" ({', '.join(per_db)})" if per_db else "")
            + f", {report['commands']} commands replayed"
            + (f" on a snapshot of {snapshot_keys} keys" if snapshot_keys is not None else "")
        )
        for file, off, dropped in report["truncated"]:
            if rep.cut is None:
                rep.cut = (file, off, dropped)
                rep.problem(f"{file} ends inside a command at offset {off} ({dropped} bytes)")
    finally:
        store.close()
    if rep.problems:
        return 1, rep
    rep.line("  result: healthy")
    return 0, rep


def fix_store(path: Path, rep: _Report) -> int:
    """Drop the cut tail of the last log (only that); returns the exit status."""
    fixable = rep.cut is not None and len(rep.problems) == 1
    if not fixable:
        if rep.cut:
            rep.line(
                "  --fix: nothing changed (it only drops a cut tail of the last log, and "
                "this store has other damage)"
            )
        else:
            rep.line("  --fix: nothing to fix")
        return 1 if rep.problems else 0
    if rep.holder is not None:
        who = "another process" if rep.holder < 0 else f"process {rep.holder}"
        rep.line(f"  --fix: nothing changed: the store is open for writing by {who}")
        return 1
    xs = _import_xstreams()
    from xstreams import exceptions as xexc  # noqa: PLC0415

    file, off, dropped = rep.cut
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            store = xs.Store(path, fsync="always")
        except xexc.StoreError as e:
            rep.line(f"  --fix: nothing changed: {e}")
            return 1
    store.close()
    repaired = [w for w in caught if issubclass(w.category, xexc.StoreRepairedWarning)]
    if not repaired:
        rep.line("  --fix: nothing changed (the engine found no cut tail)")
        return 1
    rep.line(
        f"  fixed: dropped the {dropped} bytes of {file} from offset {off} "
        "(an incomplete last command)"
    )
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not (path / MANIFEST).exists():
        _no_store("check", path)
        return EXIT_USAGE
    status, rep = check_store(path)
    if status and args.fix:
        status = fix_store(path, rep)
        if status == 0:
            rep.line("re-checking:")
            status, _ = check_store(path)
    elif status and rep.cut is not None and len(rep.problems) == 1:
        rep.line("  result: damaged (a cut tail only: run with --fix to drop it)")
    elif status:
        rep.line("  result: damaged")
    return status


# ---------------------------------------------------------------------------- dump


_KEY_FIELDS = ("db", "key", "type", "expire-at-ms")


def _text_stream(view: Dict[str, Any], w) -> None:
    for s, v in view.items():
        if s not in _KEY_FIELDS and not isinstance(v, list):
            w(f"    {s}: {v}")
    w(f"    entries: {len(view['entries'])}")
    for eid, fv in view["entries"]:
        pairs = " ".join(f"{_q(fv[i])}={_q(fv[i + 1])}" for i in range(0, len(fv), 2))
        w(f"      {eid} {pairs}".rstrip())
    w(f"    idmp-producers: {len(view['idmp-producers'])}")
    for p in view["idmp-producers"]:
        w(f"      producer {_q(p['pid'])} ({len(p['iids'])} IIDs, oldest first)")
        for iid, i in p["iids"]:
            w(f"        {_q(iid)} -> {i}")
    w(f"    groups: {len(view['groups'])}")
    for g in view["groups"]:
        w(f"      group {_q(g['name'])}")
        er = "nil" if g["entries-read"] is None else g["entries-read"]
        lag = "nil" if g["lag"] is None else g["lag"]
        w(f"        last-delivered-id: {g['last-delivered-id']}")
        w(f"        entries-read: {er}")
        w(f"        lag: {lag}")
        w(f"        pel-count: {g['pel-count']}")
        w(f"        nacked-count: {g['nacked-count']}")
        w("        pending (by id): id, owner, delivery-time, delivery-count")
        for pid, owner, t, n in g["pending"]:
            who = "(NACKed, unowned)" if owner is None else _q(owner)
            w(f"          {pid} {who} {t} {n}")
        w(f"        nack-zone (FIFO): {' '.join(g['nack-zone']) or '-'}")
        w(f"        delivery-order: {' '.join(g['delivery-order']) or '-'}")
        w(f"        consumers: {len(g['consumers'])}")
        for c in g["consumers"]:
            w(
                f"          consumer {_q(c['name'])} seen-time={c['seen-time']} "
                f"active-time={c['active-time']} pel-count={c['pel-count']}"
            )
            for pid, t, n in c["pending"]:
                w(f"            {pid} {t} {n}")


def dump_store(path: Path, db: Optional[int], key: Optional[bytes], fmt: str, out) -> int:
    xs = _import_xstreams()
    from xstreams import exceptions as xexc  # noqa: PLC0415

    try:
        info = inspect_store(path)
    except xexc.StoreError as e:
        print(f"xstreams dump: {e}", file=sys.stderr)
        return 1
    missing = [
        f["name"] for f in info["files"] if f["problem"] and f["problem"]["kind"] == "missing"
    ]
    if missing:
        print(
            f"xstreams dump: {', '.join(missing)} listed in {MANIFEST} but missing "
            "(see `xstreams check`)",
            file=sys.stderr,
        )
        return 1
    last_time = info["last_time"]
    clock = {} if last_time is None else {"clock_ms": last_time}
    notes: List[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            store = _progress.step(
                "loading the store (replaying its logs)",
                lambda: xs.Store(path, read_only=True, **clock),
            )
        except xexc.StoreError as e:
            print(f"xstreams dump: {e} (`xstreams check {path}` says more)", file=sys.stderr)
            return 1
    for w in caught:
        if issubclass(w.category, xexc.StoreRepairedWarning):
            notes.append(str(w.message))
    try:
        config = {n: store.config_get(n) for n in SETTINGS}
        keys = read_keys(store, db, key)
    finally:
        store.close()
    if fmt == "json":
        doc = {"store": str(path), "config": config, "notes": notes, "keys": keys}
        json.dump(_jsonable(doc), out, indent=2, sort_keys=False)
        out.write("\n")
        return 0

    def w(text: str) -> None:
        print(text, file=out)

    w(f"store {path}")
    for n in notes:
        w(f"note: {n}")
    w("config: " + " ".join(f"{k}={v}" for k, v in config.items()))
    current = None
    for k in keys:
        if k["db"] != current:
            current = k["db"]
            w(f"db {current}")
        exp = "" if k["expire-at-ms"] is None else f" expire-at-ms={k['expire-at-ms']}"
        w(f"  key {_q(k['key'])} {k['type']}{exp}")
        if k["type"] == "string":
            w(f"    value: {_q(k['value'])}")
        else:
            _text_stream(k, w)
    if not keys:
        w("(no keys)")
    return 0


def cmd_dump(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not (path / MANIFEST).exists():
        _no_store("dump", path)
        return EXIT_USAGE
    key = os.fsencode(args.key) if args.key is not None else None
    return dump_store(path, args.db, key, args.format, sys.stdout)


# ---------------------------------------------------------------------------- RDB files


def _key_count(store) -> int:
    return sum(store.execute_command("DBSIZE", db=d) for d in range(16))


def cmd_import(args: argparse.Namespace) -> int:
    """Restore the strings and streams of a redis-server RDB file into a store."""
    import xstreams  # noqa: PLC0415
    from xstreams import _xstreams  # noqa: PLC0415

    rdb = Path(args.rdb)
    if not rdb.is_file():
        print(
            f"xstreams import: no such file {rdb}: give the path of an RDB file "
            "redis-server wrote (its dir/dbfilename, dump.rdb by default)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        store = _progress.step("opening the store", lambda: xstreams.Store(os.fspath(args.path)))
    except xstreams.StoreLockedError as e:
        print(
            f"xstreams import: {e}: stop the process that has it open for writing "
            "(or import into another directory)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except (xstreams.StoreError, OSError) as e:
        print(f"xstreams import: cannot open the store at {args.path}: {e}", file=sys.stderr)
        return EXIT_FAILED
    try:
        before = _key_count(store)
        info = _progress.step(
            f"importing {rdb.name}",
            lambda: _xstreams.rdb_import(store, os.fspath(rdb)),
            count=lambda: max(0, _key_count(store) - before),
        )
    except ValueError as e:
        print(
            f"xstreams import: {rdb}: {e}; the keys before the damage were imported "
            "(`redis-check-rdb` tells what redis-server makes of the file)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except xstreams.ResponseError as e:
        print(f"xstreams import: {rdb}: a key was refused: {e}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as e:
        print(f"xstreams import: cannot read {rdb}: {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        store.close()
    skipped = ", ".join(f"{n} {t}" for t, n in info["skipped"]) or "none"
    print(
        f"imported {info['keys']} keys (strings and streams) from {rdb} "
        f"(RDB version {info['version']}) into {args.path}; skipped: {skipped}"
        + (f"; {info['functions_skipped']} function libraries" if info["functions_skipped"] else "")
    )
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """Write a store as an RDB file redis-server 8.8 loads."""
    import xstreams  # noqa: PLC0415
    from xstreams import _xstreams  # noqa: PLC0415

    path = Path(args.path)
    if not (path / MANIFEST).exists():
        _no_store("export", path)
        return EXIT_USAGE
    try:
        store = _progress.step(
            "loading the store (replaying its logs)",
            lambda: xstreams.Store(os.fspath(path), read_only=True),
        )
    except xstreams.StoreError as e:
        print(f"xstreams export: {e} (`xstreams check {path}` says more)", file=sys.stderr)
        return EXIT_FAILED
    try:
        written = _xstreams.ExportProgress()
        n = _progress.step(
            f"writing {Path(args.rdb).name}",
            lambda: _xstreams.rdb_export(store, os.fspath(args.rdb), progress=written),
            count=lambda: written.keys,
            total=_key_count(store),
        )
    except OSError as e:
        print(
            f"xstreams export: cannot write {args.rdb}: {e}: choose a path in a writable "
            "directory with room for the file",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except xstreams.XStreamsError as e:
        # The file is written aside, read back and checked against the store before it
        # takes its name: a file that does not read back is removed, nothing is left.
        print(f"xstreams export: {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        store.close()
    print(f"wrote {args.rdb} ({n} bytes, RDB version 14)")
    return EXIT_OK


# ---------------------------------------------------------------------------- main


def _version() -> str:
    try:
        from xstreams import __version__  # noqa: PLC0415

        return __version__
    except ImportError:  # pragma: no cover - the extension module is missing
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``, importing the engine only when asked (it is slow to load)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"xstreams {_version()}")
        parser.exit()


EPILOG = f"""\
exit status (every command):
  {EXIT_OK}    done (check: the store is healthy; serve: after SHUTDOWN, Ctrl-C or SIGTERM)
  {EXIT_FAILED}    the store or file is damaged, or the operation failed (the message says which
       file and what to do; serve: it could not start or could not persist a write)
  {EXIT_USAGE}    usage error: bad arguments, or no store / no file at the path given
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); a store being written is left as after a crash
       (`xstreams check --fix PATH` drops an incomplete last command)

Progress of long steps is shown on stderr when it is a terminal, never in a pipe.
Store formats: docs/format.md; RDB files: docs/rdb.md; the server: docs/server.md."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="xstreams",
        description="Serve, check, dump, import and export xstreams stores. "
        "`xstreams COMMAND --help` tells more about each command.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action=_VersionAction)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    # Listed for --help only: main() hands `serve ...` to xstreams.server before parsing.
    sub.add_parser(
        "serve",
        help="run the RESP server on a store (options as redis-server's)",
        add_help=False,
    )
    c = sub.add_parser(
        "check",
        help="verify a store's files and invariants (--fix drops a cut tail)",
        description="Verify a store directory and report what it holds. Exit status: "
        "0 healthy, 1 damaged, 2 usage error.",
    )
    c.add_argument("path", metavar="PATH")
    c.add_argument(
        "--fix",
        action="store_true",
        help="drop the cut tail (incomplete last command) of the last log; nothing else",
    )
    c.set_defaults(func=cmd_check)
    d = sub.add_parser(
        "dump",
        help="print the whole state of a store (text or JSON)",
        description="Print the "
        "state of a store: every key, every stream entry, group, consumer, "
        "PEL, NACK zone and IDMP producer.",
    )
    d.add_argument("path", metavar="PATH")
    d.add_argument("--db", type=int, choices=range(16), metavar="N", help="only database N")
    d.add_argument("--key", metavar="K", help="only key K")
    d.add_argument("--format", choices=["text", "json"], default="text")
    d.set_defaults(func=cmd_dump)
    i = sub.add_parser(
        "import",
        help="load the strings and streams of a redis-server RDB file",
        description="Restore every string and stream of a redis-server RDB file (any "
        "version up to 8.8's) into the store at PATH (created if missing; keys already "
        "there are replaced). Keys of other types are skipped and counted.",
    )
    i.add_argument("rdb", metavar="RDB")
    i.add_argument("path", metavar="PATH")
    i.set_defaults(func=cmd_import)
    e = sub.add_parser(
        "export",
        help="write a store as an RDB file redis-server 8.8 loads",
        description="Write every key of the store at PATH as an RDB file (version 14) "
        "that redis-server 8.8 loads with --dir/--dbfilename.",
    )
    e.add_argument("path", metavar="PATH")
    e.add_argument("rdb", metavar="RDB")
    e.set_defaults(func=cmd_export)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        # `xstreams serve ...`: the RESP server (xstreams.server parses its own options).
        try:
            from xstreams import server  # noqa: PLC0415
        except ImportError as e:
            print(f"xstreams serve: not available ({e})", file=sys.stderr)
            return 2
        return server.main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except BrokenPipeError:  # pragma: no cover - `xstreams dump ... | head`
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"xstreams {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
