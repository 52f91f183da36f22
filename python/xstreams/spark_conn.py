"""Connections of the ``xstreams`` Spark source and sink to live servers: one server
(``xstreams serve``, redis-server) or a Redis Cluster, over TCP, TLS or a Unix socket.

Options (all but ``url`` optional):

* ``url``: ``redis://[user:password@]host:port[/db]``, ``rediss://...`` (TLS) or
  ``unix:///path/to/socket``.
* ``user``, ``password``: AUTH, instead of (and over) the URL's. Spark hides the value
  of ``password`` in its UI, logs and plans (its ``spark.redaction.regex`` matches
  ``password``; a ``url`` option is hidden as a whole by
  ``spark.sql.redaction.options.regex``).
* ``tlsCaCertFile``, ``tlsCertFile``, ``tlsKeyFile``: the CA that signed the server's
  certificate, and the client's certificate and key (a server run with
  ``tls-auth-clients yes``), as redis-server names them; they need a ``rediss://`` URL.
* ``cluster``: ``auto`` (the default: the node's ``INFO cluster`` says whether it runs
  in cluster mode), ``true`` or ``false``.

A cluster client (redis-py's ``RedisCluster``) learns the slot map from the node in the
URL, sends each key's commands to the shard that owns the key's slot, and follows
``MOVED`` and ``ASK`` while slots migrate. Both kinds of client return raw replies
(bytes and lists) for the stream commands, as the source and sink parse them.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from .spark_io import bad_option, get_option

#: Seconds a command may wait for its reply before the connection is given up.
SOCKET_TIMEOUT = 60

_TLS_OPTIONS = {
    "tlsCaCertFile": "ssl_ca_certs",
    "tlsCertFile": "ssl_certfile",
    "tlsKeyFile": "ssl_keyfile",
}

# Reply callbacks redis-py would apply to the commands the source and sink send; the
# clients here drop them (the source parses raw replies, and entries may repeat fields).
_RAW_PREFIXES = ("X",)
_RAW_COMMANDS = ("SCAN", "TYPE", "EXISTS", "DEL", "INFO")


def url_option(options: Mapping[str, Any]) -> str:
    url = get_option(options, "url")
    if url is None or str(url) == "":
        raise ValueError('xstreams: give option("url", "redis://host:port")')
    u = str(url)
    if not u.startswith(("redis://", "rediss://", "unix://")):
        raise bad_option(
            "url", f"must be redis://host:port[/db], rediss://... or unix://, got {u!r}"
        )
    return u


def client_kwargs(options: Mapping[str, Any], url: str) -> Dict[str, Any]:
    """redis-py keyword arguments from the AUTH and TLS options (checked)."""
    # RESP2: one reply shape (lists) whatever redis-py's default protocol is.
    kw: Dict[str, Any] = {
        "decode_responses": False,
        "socket_timeout": SOCKET_TIMEOUT,
        "protocol": 2,
    }
    user = get_option(options, "user")
    password = get_option(options, "password")
    if user is not None and password is None:
        raise bad_option("user", 'needs option("password") too: AUTH takes a user and a password')
    if user is not None:
        kw["username"] = str(user)
    if password is not None:
        kw["password"] = str(password)
    for name, arg in _TLS_OPTIONS.items():
        v = get_option(options, name)
        if v is None:
            continue
        if not url.startswith("rediss://"):
            raise bad_option(name, f'needs a rediss:// URL (TLS), got option("url") {url!r}')
        kw[arg] = str(v)
    if ("ssl_certfile" in kw) != ("ssl_keyfile" in kw):
        missing = "tlsKeyFile" if "ssl_keyfile" not in kw else "tlsCertFile"
        raise bad_option(missing, "is needed too: a client certificate takes a cert and a key")
    return kw


def _without_auth(url: str) -> Tuple[str, Optional[str]]:
    """``url`` without its user and password, and the user it named (AUTH options
    replace the URL's: redis-py's ``from_url`` would let the URL's win)."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    auth, _, host = parts.netloc.rpartition("@")
    user = unquote(auth.partition(":")[0]) or None
    return urlunsplit(parts._replace(netloc=host)), user


def cluster_mode(options: Mapping[str, Any]) -> Optional[bool]:
    """``option("cluster")``: True, False, or None for "ask the node"."""
    raw = get_option(options, "cluster")
    s = "auto" if raw is None else str(raw).strip().lower()
    if s == "auto":
        return None
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise bad_option("cluster", f"must be auto, true or false, got {raw!r}")


def _raw(r: Any) -> Any:
    """``r`` (a cluster node's redis-py ``Redis``) without reply callbacks for the stream
    commands (the cluster client itself needs those of COMMAND and CLUSTER)."""
    for name in list(r.response_callbacks):
        up = str(name).upper()
        if up.startswith(_RAW_PREFIXES) or up in _RAW_COMMANDS:
            del r.response_callbacks[name]
    return r


def _answers_in_cluster_mode(r: Any, url: str) -> bool:
    import redis

    try:
        info = r.execute_command("INFO", "cluster")
    except redis.ResponseError as e:
        raise ValueError(
            f"xstreams: cannot tell whether {_safe(url)} is a Redis Cluster node "
            f'(INFO cluster: {e}); set option("cluster", "true") or ("cluster", "false")'
        ) from None
    text = info.decode() if isinstance(info, (bytes, bytearray)) else str(info)
    return "cluster_enabled:1" in text


def _safe(url: str) -> str:
    """``url`` without its password, for error messages."""
    scheme, sep, rest = url.partition("://")
    auth, at, host = rest.rpartition("@")
    if not at:
        return url
    user = auth.partition(":")[0]
    return f"{scheme}{sep}{user}:***@{host}" if ":" in auth else f"{scheme}{sep}***@{host}"


def connect(options: Union[Mapping[str, Any], str]) -> Any:
    """A redis-py client of the target the options name: ``redis.Redis`` for one server,
    ``redis.RedisCluster`` for a cluster node (see the module doc). Raw replies."""
    import redis

    opts: Mapping[str, Any] = {"url": options} if isinstance(options, str) else options
    url = url_option(opts)
    kw = client_kwargs(opts, url)
    if "password" in kw:
        url, url_user = _without_auth(url)
        if url_user is not None and "username" not in kw:
            kw["username"] = url_user
    mode = cluster_mode(opts)
    if mode is not True:
        r = redis.Redis.from_url(url, **kw)
        r.response_callbacks.clear()
        try:
            if mode is False or not _answers_in_cluster_mode(r, url):
                return r
        except BaseException:
            r.close()
            raise
        r.close()
    if url.startswith("unix://"):
        raise bad_option(
            "cluster", "needs a redis:// or rediss:// URL: a cluster is reached over TCP"
        )
    db = redis.connection.parse_url(url).get("db")
    if db:
        raise bad_option("url", f"names database {db}: a Redis Cluster has database 0 only")
    rc = redis.RedisCluster.from_url(url, **kw)
    nodes = rc.nodes_manager
    for node in nodes.nodes_cache.values():
        if node.redis_connection is not None:
            _raw(node.redis_connection)
    make = nodes.create_redis_node

    def create_raw_node(host: str, port: int, **node_kw: Any) -> Any:
        return _raw(make(host, port, **node_kw))

    nodes.create_redis_node = create_raw_node
    return rc


# Clients kept by an executor's Python worker between the tasks it runs (Spark reuses
# its Python workers: spark.python.worker.reuse), keyed by the connection options.
_TASK_CLIENTS: Dict[Tuple[Tuple[str, str], ...], Any] = {}
_TASK_CLIENTS_LOCK = threading.Lock()
_TASK_CLIENTS_MAX = 8


def _client_key(options: Mapping[str, Any]) -> Tuple[Tuple[str, str], ...]:
    return tuple(sorted((str(k).lower(), str(v)) for k, v in options.items()))


@contextmanager
def task_client(options: Mapping[str, Any]) -> Iterator[Any]:
    """A client of the target the options name, for one task on an executor: the one
    an earlier task of this Python worker left (after a ``PING`` says it still answers:
    a server restarted in between gets a new connection), else :func:`connect`'s. A
    cluster client keeps its slot map, so a task does not pay for the connection, the
    ``INFO cluster`` probe and the slot discovery again. The client goes back to the
    worker's cache when the block ends normally and is closed when it raises (a
    half-read reply or an open ``MULTI`` must not reach the next task). Two tasks of one
    worker at once each get their own."""
    import redis

    key = _client_key(options)
    with _TASK_CLIENTS_LOCK:
        client = _TASK_CLIENTS.pop(key, None)
    if client is not None:
        try:
            client.ping()
        except (redis.RedisError, OSError):
            client.close()
            client = None
    if client is None:
        client = connect(options)
    try:
        yield client
    except BaseException:
        client.close()
        raise
    with _TASK_CLIENTS_LOCK:
        old = _TASK_CLIENTS.pop(key, None)
        _TASK_CLIENTS[key] = client
        extra = [_TASK_CLIENTS.pop(k) for k in list(_TASK_CLIENTS)[:-_TASK_CLIENTS_MAX]]
    for c in ([old] if old is not None else []) + extra:
        c.close()


def is_cluster(client: Any) -> bool:
    import redis

    return isinstance(client, redis.RedisCluster)


def primaries(client: Any) -> List[Any]:
    """The clients of each primary node (a cluster) or ``[client]`` (one server)."""
    if not is_cluster(client):
        return [client]
    out = []
    for node in client.get_primaries():
        out.append(client.get_redis_connection(node))
    return out


def scan_streams(client: Any, pattern: str, count: int = 1000) -> List[str]:
    """The stream keys matching ``pattern`` (SCAN ... MATCH ... TYPE stream on every
    primary), sorted. A key created while the scans run may be missed (SCAN's promise
    is the keys present from its start to its end): the next call finds it."""
    from .spark_io import as_text

    found = set()
    for node in primaries(client):
        cursor = b"0"
        while True:
            cursor, keys = node.execute_command(
                "SCAN", cursor, "MATCH", pattern, "COUNT", count, "TYPE", "stream"
            )
            found.update(as_text(k) for k in keys)
            if as_text(cursor) == "0":
                break
    return sorted(found)


# --------------------------------------------------------------------------- hash slots


def key_slot(key: Union[str, bytes]) -> int:
    """The Redis Cluster hash slot of ``key`` (its ``{hash tag}`` if it has one)."""
    from redis.crc import key_slot as _slot

    return int(_slot(key.encode() if isinstance(key, str) else bytes(key)))


_SLOT_TAGS: Optional[List[str]] = None


def slot_tag(slot: int) -> str:
    """A short text without braces whose own slot is ``slot``: ``{tag}`` in a key name
    puts that key in ``slot``."""
    global _SLOT_TAGS
    if not 0 <= slot < 16384:
        raise ValueError(f"xstreams: a hash slot is 0..16383, got {slot}")
    if _SLOT_TAGS is None:
        from redis.crc import key_slot as _slot

        tags: List[Optional[str]] = [None] * 16384
        left, i = 16384, 0
        while left:
            t = format(i, "x")
            s = _slot(t.encode())
            if tags[s] is None:
                tags[s] = t
                left -= 1
            i += 1
        _SLOT_TAGS = [t for t in tags if t is not None]
    return _SLOT_TAGS[slot]


def slot_marker_key(name: str, key: Union[str, bytes]) -> str:
    """``name`` with a hash tag that puts it in ``key``'s slot: a marker that a
    transaction (MULTI/EXEC, a Lua script) on a cluster may touch together with ``key``.
    ``name`` must not hold ``{`` (it would move the tag)."""
    if "{" in name or "}" in name:
        raise ValueError(f"xstreams: a marker name must not hold braces, got {name!r}")
    out = f"{name}{{{slot_tag(key_slot(key))}}}"
    return out
