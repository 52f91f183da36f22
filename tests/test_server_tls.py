"""TLS as redis-server offers it (``--tls-port``, ``--tls-cert-file``, ``--tls-key-file``,
``--tls-ca-cert-file``, ``--tls-auth-clients``), with redis-py and redis-cli over TLS.
Certificates are made by the ``openssl`` command in a temporary directory."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest
from server_support import free_port, require_serve

redis = pytest.importorskip("redis")

if shutil.which("openssl") is None:
    pytest.skip("no openssl command to make test certificates", allow_module_level=True)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
        "-out", "ca.crt", "-days", "2", "-subj", "/CN=xstreams-test-ca", cwd=d,
    )  # fmt: skip
    for name, ext in (
        ("server", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
        ("client", "extendedKeyUsage=clientAuth"),
    ):
        (d / f"{name}.ext").write_text(ext + "\n")
        _openssl(
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
            "-extfile", f"{name}.ext", cwd=d,
        )  # fmt: skip
    return d


class TlsServer:
    def __init__(self, certs: Path, *extra: str, plain: bool = False) -> None:
        require_serve()
        self.tls_port = free_port()
        self.port = free_port() if plain else 0
        argv = [
            sys.executable, "-m", "xstreams.server", "--port", str(self.port),
            "--tls-port", str(self.tls_port),
            "--tls-cert-file", str(certs / "server.crt"),
            "--tls-key-file", str(certs / "server.key"),
            "--tls-ca-cert-file", str(certs / "ca.crt"),
            *extra,
        ]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.certs = certs

    def client(self, cert: bool = True, **kw):
        c = self.certs
        extra = {"ssl_certfile": str(c / "client.crt"), "ssl_keyfile": str(c / "client.key")}
        return redis.Redis(
            port=self.tls_port,
            ssl=True,
            ssl_ca_certs=str(c / "ca.crt"),
            decode_responses=True,
            **(extra if cert else {}),
            **kw,
        )

    def wait(self, cert: bool = True) -> None:
        end = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            try:
                self.client(cert).ping()
                return
            except redis.exceptions.ConnectionError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture
def tls_server(certs):
    srv = TlsServer(certs)
    srv.wait()
    yield srv
    srv.stop()


def test_tls_only_with_client_certificates(tls_server):
    r = tls_server.client()
    assert r.xadd("s", {"f": "v"}, id="1-1") == "1-1"
    assert r.xrange("s") == [("1-1", {"f": "v"})]
    # A client without a certificate is refused (tls-auth-clients yes, the default).
    with pytest.raises(redis.exceptions.ConnectionError):
        tls_server.client(cert=False).ping()
    # A client that does not trust the server's CA refuses it.
    with pytest.raises(redis.exceptions.ConnectionError):
        redis.Redis(port=tls_server.tls_port, ssl=True, ssl_cert_reqs="required").ping()


def test_tls_auth_clients_optional_and_plain_port(certs):
    srv = TlsServer(certs, "--tls-auth-clients", "optional", plain=True)
    try:
        srv.wait(cert=False)
        assert srv.client(cert=False).set("k", "v")
        assert srv.client(cert=True).get("k") == "v"
        plain = redis.Redis(port=srv.port, decode_responses=True)
        assert plain.get("k") == "v"
    finally:
        srv.stop()


def test_tls_bad_options(certs):
    out = subprocess.run(
        [sys.executable, "-m", "xstreams.server", "--tls-port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode != 0
    assert "--tls-cert-file" in out.stderr


def _redis_cli_with_tls() -> str | None:
    for path in ("/work/shared/redis-8.8/bin/redis-cli", shutil.which("redis-cli")):
        if path and Path(path).exists():
            help_text = subprocess.run([path, "--help"], capture_output=True, text=True).stdout
            if "--tls" in help_text:
                return path
    return None


def test_redis_cli_over_tls(tls_server):
    cli = _redis_cli_with_tls()
    if cli is None:
        pytest.skip("no redis-cli built with TLS")
    c = tls_server.certs
    out = subprocess.run(
        [
            cli, "-p", str(tls_server.tls_port), "--tls", "--cacert", str(c / "ca.crt"),
            "--cert", str(c / "client.crt"), "--key", str(c / "client.key"),
            "XADD", "s", "5-1", "f", "v",
        ],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert out.stdout.strip() == "5-1", out.stderr


def test_python_ssl_context_sees_tls13(tls_server):
    """The handshake is a modern one (TLS 1.2 or 1.3, as rustls offers)."""
    import socket

    c = tls_server.certs
    ctx = ssl.create_default_context(cafile=str(c / "ca.crt"))
    ctx.load_cert_chain(str(c / "client.crt"), str(c / "client.key"))
    with socket.create_connection(("127.0.0.1", tls_server.tls_port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            assert s.version() in ("TLSv1.2", "TLSv1.3")
            s.sendall(b"PING\r\n")
            assert s.recv(100) == b"+PONG\r\n"


def test_tls_settings_from_a_config_file(certs, tmp_path):
    """``xstreams serve CONFIG_FILE``: the tls-* directives spelled as in redis.conf
    (quoted paths, comments), and an option after the file overriding it."""
    tls_port, wrong_port = free_port(), free_port()
    conf = tmp_path / "redis.conf"
    conf.write_text(
        "# TLS only, clients need no certificate\n"
        "port 0\n"
        f"tls-port {wrong_port}\n"
        f'tls-cert-file "{certs / "server.crt"}"\n'
        f"tls-key-file {certs / 'server.key'}\n"
        f"tls-ca-cert-file {certs / 'ca.crt'}\n"
        "tls-auth-clients optional\n"
    )
    argv = [sys.executable, "-m", "xstreams.server", str(conf), "--tls-port", str(tls_port)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    srv = TlsServer.__new__(TlsServer)
    srv.proc, srv.certs, srv.tls_port, srv.port = proc, certs, tls_port, 0
    try:
        srv.wait(cert=False)
        r = srv.client(cert=False)
        assert r.xadd("s", {"f": "v"}, id="1-1") == "1-1"
        assert r.info("server")["config_file"] == str(conf)
        assert srv.client(cert=True).xlen("s") == 1
    finally:
        srv.stop()


def test_config_file_errors_name_the_line(tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text("port 0\ntls-port 6390\ntls-auth-clients maybe\n")
    out = subprocess.run(
        [sys.executable, "-m", "xstreams.server", str(conf)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode != 0
    assert f"{conf}:3" in out.stderr and "tls-auth-clients" in out.stderr
