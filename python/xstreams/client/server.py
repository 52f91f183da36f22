"""Server command methods of the redis-py compatible client (databases, INFO, TIME,
CONFIG), with redis-py 8.1's names and signatures."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from .encoding import EncodableT, KeyT, PatternT


class ServerCommands:
    """Commands about the store as a whole rather than one key."""

    def execute_command(self, *args: Any, **options: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def dbsize(self, **kwargs: Any) -> int:
        """Return the number of keys in the current database."""
        return self.execute_command("DBSIZE", **kwargs)

    def flushall(self, asynchronous: bool = False, **kwargs: Any) -> bool:
        """Delete all keys in all databases."""
        args = []
        if asynchronous:
            args.append(b"ASYNC")
        return self.execute_command("FLUSHALL", *args, **kwargs)

    def flushdb(self, asynchronous: bool = False, **kwargs: Any) -> bool:
        """Delete all keys in the current database."""
        args = []
        if asynchronous:
            args.append(b"ASYNC")
        return self.execute_command("FLUSHDB", *args, **kwargs)

    def ping(self, **kwargs: Any) -> bool:
        """Return True if the store answers PONG."""
        return self.execute_command("PING", **kwargs)

    def echo(self, value: EncodableT, **kwargs: Any) -> Union[bytes, str]:
        """Return ``value`` as the store echoes it."""
        return self.execute_command("ECHO", value, **kwargs)

    def info(self, section: Optional[str] = None, *args: str, **kwargs: Any) -> Dict[str, Any]:
        """The store's INFO as a dict (``section`` selects sections, as in Redis)."""
        if section is None:
            return self.execute_command("INFO", **kwargs)
        return self.execute_command("INFO", section, *args, **kwargs)

    def time(self, **kwargs: Any) -> Tuple[int, int]:
        """The store's time as ``(seconds, microseconds)`` since the Unix epoch."""
        return self.execute_command("TIME", **kwargs)

    def config_get(
        self, pattern: PatternT = "*", *args: PatternT, **kwargs: Any
    ) -> Dict[Optional[str], Optional[str]]:
        """The configuration settings matching ``pattern`` (and ``args``) as a dict."""
        return self.execute_command("CONFIG GET", pattern, *args, **kwargs)

    def config_set(
        self,
        name: KeyT,
        value: EncodableT,
        *args: Union[KeyT, EncodableT],
        **kwargs: Any,
    ) -> bool:
        """Set configuration ``name`` to ``value`` (more name/value pairs in ``args``)."""
        return self.execute_command("CONFIG SET", name, value, *args, **kwargs)
