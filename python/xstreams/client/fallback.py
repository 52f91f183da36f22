"""The Python command methods the native layer falls back to, handed to it here.

The native methods of :class:`~xstreams.client.sync.Redis` and
:class:`~xstreams.client.pipeline.Pipeline` take the common calls in Rust; another store,
a custom response callback or an argument shape left to redis-py's client-side checks
goes to the Python method of the same name. Python registers those with the extension
(the extension imports no Python module by name).
"""

from __future__ import annotations

from .. import _xstreams
from .callbacks import _parse_xpending
from .keyspace import KeyspaceCommands
from .pipeline import Pipeline
from .server import ServerCommands
from .streams import StreamCommands


class _PythonCommands(StreamCommands, KeyspaceCommands, ServerCommands):
    """Every command method in Python: what the native methods fall back to (another
    store, a custom callback, an argument shape the native code leaves to redis-py's
    checks)."""


_xstreams._register_client(
    commands=_PythonCommands,
    pipeline_execute=Pipeline.execute_command,
    xpending_callback=_parse_xpending,
)
