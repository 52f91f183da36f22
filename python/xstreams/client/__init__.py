"""The redis-py compatible client: ``Redis`` (sync), ``Pipeline``, and their pieces.

See :mod:`xstreams.client.sync` for the client and the layout of this package, and
:mod:`xstreams.asyncio` for the asyncio client.
"""

from __future__ import annotations

from . import fallback as _fallback  # noqa: F401  (hands the Python methods to Rust)
from .callbacks import CaseInsensitiveDict, get_response_callbacks
from .encoding import EMPTY_RESPONSE, NEVER_DECODE, Encoder
from .fallback import _PythonCommands
from .pipeline import Pipeline
from .sync import Redis, StrictRedis

__all__ = [
    "Redis",
    "StrictRedis",
    "Pipeline",
    "Encoder",
    "CaseInsensitiveDict",
    "get_response_callbacks",
    "EMPTY_RESPONSE",
    "NEVER_DECODE",
    "_PythonCommands",
]
