"""A MariaDB server of a test's own, on a free TCP port, that the test may stop and start again.

Built from the machine's `mariadb-install-db` and `mariadbd` (see tests/mysql_server.py), run as the
user running the tests. Data and socket live in a temp directory that the test removes."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests import mysql_server


def available() -> bool:
    return bool(shutil.which("mariadb-install-db")) and Path(
        shutil.which("mariadbd") or "/usr/sbin/mariadbd").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayMariadb:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="orecast-mariadb-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = f"--user={pwd.getpwuid(os.geteuid()).pw_name}"
        self.process: subprocess.Popen[bytes] | None = None
        subprocess.run(
            ["mariadb-install-db", "--no-defaults", self.user, f"--datadir={self.data}",
             "--auth-root-authentication-method=normal", "--skip-test-db"],
            capture_output=True, check=True, timeout=120,
        )

    @property
    def admin_url(self) -> str:
        return f"mysql://root@127.0.0.1:{self.port}/mysql"

    @property
    def url(self) -> str:
        return f"mysql://root@127.0.0.1:{self.port}/orecast"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [shutil.which("mariadbd") or "/usr/sbin/mariadbd", "--no-defaults", self.user,
             f"--datadir={self.data}", f"--socket={self.root / 'sock'}", "--bind-address=127.0.0.1",
             f"--port={self.port}", "--character-set-server=utf8mb4", "--innodb-buffer-pool-size=16M",
             "--innodb-log-file-size=8M", "--skip-log-bin"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if mysql_server.reachable(self.admin_url):
                mysql_server.run_sql(self.admin_url, "CREATE DATABASE IF NOT EXISTS orecast CHARACTER SET utf8mb4")
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"mariadbd exited with {self.process.returncode}")
            time.sleep(0.2)
        raise RuntimeError("mariadbd did not accept connections within 60 s")

    def stop(self) -> None:
        """Gone at once, as a crashed server is (connections cut, no clean shutdown)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
