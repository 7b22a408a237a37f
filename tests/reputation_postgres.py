"""A throwaway PostgreSQL server for tests and the benchmark: ``initdb`` into a temporary
directory, ``pg_ctl start`` on a free loopback port, stop and delete afterwards.

Uses Debian's ``postgresql`` package (binaries under ``/usr/lib/postgresql/*/bin``).
PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user
through ``runuser``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's binary directory, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parent.parent.name))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def throwaway_postgres(*, durable: bool = False) -> Iterator[str]:
    """Start a server and yield its ``postgresql://`` URL.

    ``durable=False`` turns off fsync (tests); ``True`` keeps PostgreSQL's defaults (benchmarks).
    """
    with restartable_postgres(durable=durable) as server:
        yield server.url


class PostgresServer:
    """A running throwaway server that a test may stop (as an outage would) and start again."""

    def __init__(self, url: str, ctl: list[str]) -> None:
        self.url = url
        self._ctl = ctl  # pg_ctl with its data directory, as the server's user

    def stop(self) -> None:
        """Stop it now (``-m immediate``: connections are cut, as when a server crashes)."""
        subprocess.run([*self._ctl, "-m", "immediate", "-w", "stop"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)

    def start(self) -> None:
        """Start it again on the same port and data; returns once it accepts connections."""
        subprocess.run([*self._ctl, "-w", "start"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@contextmanager
def restartable_postgres(*, durable: bool = False) -> Iterator[PostgresServer]:
    """``throwaway_postgres``, yielding a ``PostgresServer`` that can be stopped and started."""
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install -y postgresql)")
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    base = Path(tempfile.mkdtemp(prefix="otel-reliability-pg-"))
    data, sockets = base / "data", base / "sock"
    sockets.mkdir()
    if as_root:
        user = pwd.getpwnam("postgres")
        os.chmod(base, 0o755)
        os.chown(base, user.pw_uid, user.pw_gid)
        os.chown(sockets, user.pw_uid, user.pw_gid)
    port = _free_port()
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c max_connections=50"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    quiet = dict(check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"], **quiet)
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"], **quiet)
    except subprocess.CalledProcessError as exc:
        log = (base / "log").read_text() if (base / "log").exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL: {exc.stderr.decode(errors='replace')}{log}") from exc
    ctl = [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "log")]
    try:
        yield PostgresServer(f"postgresql://postgres@127.0.0.1:{port}/postgres", ctl)
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(base, ignore_errors=True)


def fresh_schema_url(url: str) -> str:
    """A URL whose connections work in a new, empty schema of the server's database."""
    import uuid

    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    return f"{url}?options=-csearch_path%3D{schema}"


try:
    import pytest
except ImportError:  # the benchmark runs without pytest
    pass
else:

    @pytest.fixture(scope="session")
    def postgres_server() -> Iterator[str]:
        """A throwaway PostgreSQL server for the test session (skipped where none is installed)."""
        pytest.importorskip("psycopg")
        if postgres_bin() is None:
            pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
        with throwaway_postgres() as url:
            yield url
