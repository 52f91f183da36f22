"""``xstreams serve``: the Redis protocol (RESP2/RESP3) over TCP, on the same engine.

An embedded ``Store`` belongs to one process. To share streams between processes, or to use
``redis-cli``, redis-py's own connections or any other language's Redis client, run the
server::

    xstreams serve --port 6379 --dir /var/lib/xstreams      # or: python -m xstreams.server

It answers as redis-server 8.8 does for the stream commands and the keyspace, connection
and server commands clients send around them (HELLO, AUTH, SELECT, MULTI/EXEC, INFO,
CONFIG, CLIENT, COMMAND, ...). With ``--dir`` the data lives in the same directory format an
embedded ``Store(path)`` uses: stop the server and the directory opens in-process, and the
other way round (one writer at a time; the directory is locked while the server runs).

The server is written in Rust and runs with the GIL released; Ctrl-C, SIGTERM and the
``SHUTDOWN`` command stop it gracefully (connections closed, log flushed, store closed).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Callable, List, Mapping, Optional, Sequence, Union

__all__ = ["serve", "main", "build_argv"]


class _Terminated(Exception):
    """Raised by the SIGTERM handler installed while serving from the main thread."""


def build_argv(
    *,
    port: int = 6379,
    bind: Union[str, Sequence[str]] = "127.0.0.1",
    dir: Optional[Union[str, os.PathLike[str]]] = None,
    appendfsync: str = "everysec",
    requirepass: Optional[str] = None,
    protected_mode: bool = True,
    databases: int = 16,
    maxclients: int = 10000,
    enable_debug_command: str = "no",
    config: Optional[Mapping[str, Union[str, int]]] = None,
    threads: int = 0,
    quiet: bool = False,
) -> List[str]:
    """The command-line arguments equivalent to :func:`serve`'s keyword arguments."""
    binds = [bind] if isinstance(bind, str) else list(bind)
    argv = ["--port", str(port), "--bind", *binds]
    if dir is not None:
        argv += ["--dir", os.fspath(dir)]
    argv += ["--appendfsync", appendfsync]
    if requirepass:
        argv += ["--requirepass", requirepass]
    argv += ["--protected-mode", "yes" if protected_mode else "no"]
    argv += ["--databases", str(databases), "--maxclients", str(maxclients)]
    argv += ["--enable-debug-command", enable_debug_command]
    for name, value in (config or {}).items():
        argv += [f"--{name}", str(value)]
    if threads:
        argv += ["--threads", str(threads)]
    if quiet:
        argv += ["--loglevel", "warning"]
    return argv


def _run(argv: Sequence[str], on_ready: Optional[Callable[[List[str]], None]] = None):
    from ._xstreams import serve as _serve

    in_main = threading.current_thread() is threading.main_thread()
    previous = None
    if in_main:

        def _on_term(signum, frame):  # noqa: ARG001 - signal handler signature
            raise _Terminated()

        previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        return _serve(list(argv), on_ready)
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def serve(
    *,
    port: int = 6379,
    bind: Union[str, Sequence[str]] = "127.0.0.1",
    dir: Optional[Union[str, os.PathLike[str]]] = None,
    appendfsync: str = "everysec",
    requirepass: Optional[str] = None,
    protected_mode: bool = True,
    databases: int = 16,
    maxclients: int = 10000,
    enable_debug_command: str = "no",
    config: Optional[Mapping[str, Union[str, int]]] = None,
    threads: int = 0,
    quiet: bool = False,
    on_ready: Optional[Callable[[List[str]], None]] = None,
) -> None:
    """Serve until shut down (``SHUTDOWN``, Ctrl-C or SIGTERM); returns normally then.

    ``dir`` makes the store durable (the directory ``xstreams.Store(dir)`` uses);
    ``appendfsync`` is ``always``, ``everysec`` or ``no``. ``requirepass`` enables AUTH.
    Binding a non-loopback address needs a password unless ``protected_mode=False``.
    ``config`` sets store settings (``stream-node-max-entries``, ...). ``on_ready`` is
    called with the listening addresses once the server accepts connections. Raises
    ``OSError`` if the server cannot start (port in use, directory locked, ...).
    """
    argv = build_argv(
        port=port,
        bind=bind,
        dir=dir,
        appendfsync=appendfsync,
        requirepass=requirepass,
        protected_mode=protected_mode,
        databases=databases,
        maxclients=maxclients,
        enable_debug_command=enable_debug_command,
        config=config,
        threads=threads,
        quiet=quiet,
    )
    try:
        _run(argv, on_ready)
    except (KeyboardInterrupt, _Terminated):
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``xstreams serve [options]`` (``argv`` excludes the program name and ``serve``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["serve"]:
        args = args[1:]
    try:
        text = _run(args)
    except ValueError as e:
        print(f"xstreams serve: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"xstreams serve: {e}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, _Terminated):
        return 0
    if text:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
