"""The ``xstreams`` command as a person uses it (issue 47): ``--help`` lists every
subcommand with one line each, the exit statuses are documented and are what the
commands return, errors name the file and what to do, and long steps show progress on a
terminal and nothing in a pipe.

The CLI runs from the source tree, as in test_persist_cli.py.
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import termios
from pathlib import Path

import pytest
import xstreams
from persist_support import NOW, child_env, cli_command, cli_inproc, load_cli, run_cli

SUBCOMMANDS = ("serve", "check", "dump", "import", "export")
ROOT = Path(__file__).resolve().parent.parent


def _store(path: Path, keys: int = 3) -> Path:
    with xstreams.Store(path, clock_ms=NOW) as s:
        for i in range(keys):
            s.execute_command("XADD", f"s{i}", "1-1", "f", "v")
    return path


def test_help_lists_every_subcommand_on_one_line_each():
    env = dict(child_env(), COLUMNS="80")  # argparse wraps help text at the terminal width
    r = subprocess.run(cli_command() + ["--help"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for name in SUBCOMMANDS:
        at = [i for i, ln in enumerate(lines) if re.match(rf"^    {name}\s{{2,}}\S", ln)]
        assert len(at) == 1, (name, r.stdout)
        following = lines[at[0] + 1]
        assert not following.startswith(" " * 8), f"{name}'s line wraps:\n{r.stdout}"
    assert "`xstreams serve [options]`" not in r.stdout  # no longer hidden in an epilog


def test_help_documents_the_exit_statuses_and_the_docs_agree():
    cli = load_cli()
    statuses = {
        cli.EXIT_OK: 0,
        cli.EXIT_FAILED: 1,
        cli.EXIT_USAGE: 2,
        cli.EXIT_INTERRUPTED: 130,
    }
    assert list(statuses) == list(statuses.values())
    text = run_cli("--help").stdout
    assert "exit status" in text
    page = (ROOT / "docs" / "guide" / "cli.md").read_text()
    for status in statuses:
        assert re.search(rf"^  {status}\s+\S", text, re.M), (status, text)
        assert f"| {status} |" in page, status


def test_serve_help_is_the_servers():
    r = run_cli("serve", "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: xstreams serve") and "--port" in r.stdout


def test_exit_status_ok_failed_usage(tmp_path):
    path = _store(tmp_path / "s")
    assert run_cli("check", path).returncode == 0
    assert run_cli("dump", path).returncode == 0
    assert run_cli("export", path, tmp_path / "out.rdb").returncode == 0
    assert run_cli("import", tmp_path / "out.rdb", tmp_path / "t").returncode == 0
    # usage: bad arguments, no store at the path, no such file
    assert run_cli("check").returncode == 2
    assert run_cli("frobnicate").returncode == 2
    assert run_cli("dump", tmp_path / "none").returncode == 2
    assert run_cli("export", tmp_path / "none", tmp_path / "x.rdb").returncode == 2
    assert run_cli("import", tmp_path / "none.rdb", tmp_path / "t").returncode == 2
    # failed: a damaged RDB file, an unwritable destination
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(b"REDIS0011" + b"\x00" * 20)
    assert run_cli("import", bad, tmp_path / "t").returncode == 1
    assert run_cli("export", path, tmp_path / "no-such-dir" / "x.rdb").returncode == 1


def test_errors_name_the_file_and_what_to_do(tmp_path):
    r = run_cli("check", tmp_path / "none")
    assert str(tmp_path / "none") in r.stderr and "give the directory" in r.stderr
    r = run_cli("import", tmp_path / "none.rdb", tmp_path / "t")
    assert str(tmp_path / "none.rdb") in r.stderr and "give the path of an RDB file" in r.stderr
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(b"REDIS0011" + b"\x00" * 20)
    r = run_cli("import", bad, tmp_path / "t")
    assert str(bad) in r.stderr and "damaged RDB file" in r.stderr
    path = _store(tmp_path / "s")
    dest = tmp_path / "no-such-dir" / "x.rdb"
    r = run_cli("export", path, dest)
    assert str(dest) in r.stderr and "choose a path in a writable directory" in r.stderr
    assert not r.stdout
    with xstreams.Store(path):  # held open for writing
        r = run_cli("import", tmp_path / "out.rdb", path)
        assert r.returncode == 2  # the RDB is missing: checked before the store
        run_cli("export", _store(tmp_path / "u"), tmp_path / "out.rdb")
        r = run_cli("import", tmp_path / "out.rdb", path)
        assert r.returncode == 1
        assert "open for writing" in r.stderr and "stop the process" in r.stderr


def test_interrupted_is_130(tmp_path, monkeypatch):
    path = _store(tmp_path / "s")
    cli = load_cli()

    def interrupted(*_args, **_kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "dump_store", interrupted)
    code, _out, err = cli_inproc("dump", path)
    assert code == 130 and "interrupted" in err


def _on_a_terminal(*args) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal: (status, stdout, terminal text)."""
    master, slave = os.openpty()
    # A terminal has a size (a new pseudo-terminal's is 0x0, where tqdm draws nothing).
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        cli_command() + [str(a) for a in args],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=child_env(),
    )
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        screen += chunk
    os.close(master)
    out = proc.stdout.read()
    proc.stdout.close()
    return proc.wait(timeout=60), out.decode(), screen.decode(errors="replace")


@pytest.mark.parametrize(
    "command, shown",
    [
        (("dump", "{s}"), ["loading the store", "reading keys"]),
        (("check", "{s}"), ["checking files", "loading the store", "checking invariants"]),
        (("export", "{s}", "{rdb}"), ["loading the store", "writing out.rdb"]),
        (("import", "{rdb}", "{t}"), ["opening the store", "importing out.rdb"]),
    ],
)
def test_progress_on_a_terminal_and_none_in_a_pipe(tmp_path, command, shown):
    paths = {"s": _store(tmp_path / "s", keys=50), "rdb": tmp_path / "out.rdb", "t": tmp_path / "t"}
    if command[0] == "import":
        assert run_cli("export", paths["s"], paths["rdb"]).returncode == 0
    args = [a.format(**paths) for a in command]
    status, out, screen = _on_a_terminal(*args)
    assert status == 0, screen
    for text in shown:
        assert text in screen, (text, screen)
    piped = run_cli(*args)
    assert piped.returncode == 0
    assert piped.stderr == ""  # nothing drawn when stderr is not a terminal
    if command[0] in ("dump", "check"):
        assert piped.stdout == out  # the report is the same either way
    if command[0] == "dump":
        assert "reading keys:   0%|" in screen and "| 0/50 [" in screen, screen
    if command[0] == "export":  # the keys written, out of the store's
        assert "/50 [" in screen.split("writing out.rdb", 1)[1], screen


def test_check_reports_a_broken_invariant_such_as_a_node_with_no_live_entry(tmp_path, monkeypatch):
    """What ``xstreams check`` prints when the loaded store fails ``Store.validate()``,
    e.g. a stream node holding only tombstones (a file of an earlier version: no command
    leaves one now, docs/differences.md "trim-empty-node"). The engine's side, that such
    a node fails validation with this message, is
    ``structures::node::tests::delete_while_passes_tombstones_and_an_emptied_node_is_invalid``;
    here the store as loaded answers ``validate()`` with it."""
    from xstreams import exceptions as xexc

    path = _store(tmp_path / "s")
    real = xstreams.Store
    violation = "stream 's0': node 1-1 holds no live entry (1 tombstones)"

    class Loaded:
        def __init__(self, *args, **kwargs):
            self._store = real(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(self._store, name)

        def validate(self):
            raise xexc.InvariantError(violation)

    cli = load_cli()
    monkeypatch.setattr(cli, "_import_xstreams", lambda: type("M", (), {"Store": Loaded}))
    code, out, err = cli_inproc("check", path)
    assert code == 1, (out, err)
    assert f"loaded state breaks an invariant: {violation}" in out + err
