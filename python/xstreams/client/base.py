"""What every client object shares: its store, database, wire protocol, encoder and
response callbacks, and how it runs one command there (arguments encoded as redis-py
encodes them, the reply decoded and passed through the response callback).

:class:`~xstreams.client.sync.Redis` is built on it; :class:`~xstreams.client.pipeline.
Pipeline` only uses a client through it.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Sequence

from .. import _stores
from .._xstreams import Store as _NativeStore
from ..exceptions import ResponseError
from .callbacks import CaseInsensitiveDict
from .encoding import EMPTY_RESPONSE, NEVER_DECODE, Encoder, _decode_reply


class ClientBase:
    """The store, settings and one-command path of a client (see the module doc)."""

    _store: Any
    _store_lock: threading.Lock
    _db: int
    _protocol: Any
    _wire: int
    _legacy_responses: bool
    _encoder: Encoder
    _utf8_strict: bool
    response_callbacks: CaseInsensitiveDict

    @property
    def store(self) -> Any:
        """The store this client runs its commands on."""
        store = self._store
        if store is None:
            with self._store_lock:
                if self._store is None:
                    self._store = _stores.default_store()
                store = self._store
        return store

    @property
    def db(self) -> int:
        """The database number all commands of this client use."""
        return self._db

    def get_encoder(self) -> Encoder:
        """Return the encoder that turns arguments into bytes and decodes replies."""
        return self._encoder

    def get_connection_kwargs(self) -> Dict[str, Any]:
        """The redis-py connection settings that still mean something in-process."""
        enc = self._encoder
        return {
            "db": self._db,
            "encoding": enc.encoding,
            "encoding_errors": enc.encoding_errors,
            "decode_responses": enc.decode_responses,
            "protocol": self._protocol,
            "legacy_responses": self._legacy_responses,
        }

    def _tokens(self, args: Sequence[Any]) -> List[Any]:
        """The command's arguments for the store: as ``_pack`` encodes them, or (with
        strict UTF-8) left for the store to convert the same way."""
        if not (self._utf8_strict and isinstance(self.store, _NativeStore)):
            return self._pack(args)
        first = args[0]
        if isinstance(first, str):
            return [*first.encode().split(), *args[1:]]
        if isinstance(first, bytes) and b" " in first:
            return [*first.split(), *args[1:]]
        return list(args)

    def _pack(self, args: Sequence[Any]) -> List[bytes]:
        """Encode a command as redis-py would put it on the wire."""
        first = args[0]
        if isinstance(first, str):
            tokens: List[Any] = first.encode().split()
            rest = args[1:]
        elif isinstance(first, bytes) and b" " in first:
            tokens = first.split()
            rest = args[1:]
        else:
            tokens = []
            rest = args
        encode = self._encoder.encode
        tokens.extend(encode(a) for a in rest)
        return tokens

    def _parse(self, command_name: Any, response: Any, options: Dict[str, Any]) -> Any:
        """Decode a raw reply and apply the response callback, as redis-py does."""
        if NEVER_DECODE in options:
            options.pop(NEVER_DECODE)
        elif self._encoder.decode_responses:
            response = _decode_reply(
                response, self._encoder.encoding, self._encoder.encoding_errors
            )
        options.pop(EMPTY_RESPONSE, None)
        options.pop("keys", None)
        callbacks = self.response_callbacks
        if isinstance(command_name, str) and command_name in callbacks:
            return callbacks[command_name](response, **options)
        return response

    def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command and return its reply after the response callback."""
        command_name = args[0]
        tokens = self._tokens(args)
        try:
            response = self.store.execute_command(*tokens, db=self._db, protocol=self._wire)
        except ResponseError:
            if EMPTY_RESPONSE in options:
                return options[EMPTY_RESPONSE]
            raise
        return self._parse(command_name, response, options)
