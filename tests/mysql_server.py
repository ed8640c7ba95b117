"""Find a MySQL / MariaDB server for the tests that run on the third backend.

Order: `ORECAST_TEST_MYSQL_URL` if set and reachable; the machine's server on 127.0.0.1:3306 (root, no
password); else a throwaway MariaDB started from the installed binaries (`mariadb-install-db` and
`mariadbd`) in a folder under `.venv/throwaway-mariadb`, listening on a socket of its own. With none of
these, `ensure()` returns None and the MySQL tests are skipped with one line saying why.

`python -m tests.mysql_server ensure [--export]` prints the URL (or the export line for the Makefile).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pwd
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

MACHINE_URL = "mysql://root@127.0.0.1:3306/mysql"
THROWAWAY_DIR = Path(__file__).resolve().parent.parent / ".venv" / "throwaway-mariadb"
NO_SERVER = "no MySQL/MariaDB server here and no mariadbd to start one: MySQL tests skipped"


def with_database(url: str, database: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{quote(database)}"))


async def _run(url: str, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[tuple[Any, ...]]:
    import asyncmy

    from orecast.checkpoint.mysql.saver import connect_kwargs, conversions

    # The saver's conversions: ids (VARBINARY) come back as text, as the saver reads them.
    conn = await asyncmy.connect(
        **connect_kwargs(url), charset="utf8mb4", autocommit=True, connect_timeout=3, conv=conversions()
    )
    try:
        rows: list[tuple[Any, ...]] = []
        async with conn.cursor() as cur:
            for sql, params in statements:
                await cur.execute(sql, tuple(params) or None)
                rows = list(await cur.fetchall()) if cur.description else []
        return rows
    finally:
        conn.close()


def run_sql(url: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one statement with a plain connection (from sync code, also inside a running event loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _run(url, [(sql, params)])).result()


def reachable(url: str) -> bool:
    try:
        run_sql(url, "SELECT 1")
        return True
    except Exception:
        return False


def _start_throwaway() -> str | None:
    install, server = shutil.which("mariadb-install-db"), shutil.which("mariadbd") or "/usr/sbin/mariadbd"
    if not install or not Path(server).exists():
        return None
    THROWAWAY_DIR.mkdir(parents=True, exist_ok=True)
    # pytest-xdist's workers each look for a server: one makes it, the others then find it.
    with open(THROWAWAY_DIR / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _start_throwaway_locked(install, server)


def _start_throwaway_locked(install: str, server: str) -> str | None:
    data, socket = THROWAWAY_DIR / "data", THROWAWAY_DIR / "mysqld.sock"
    url = f"mysql://root@localhost/mysql?unix_socket={quote(str(socket))}"
    if socket.exists() and reachable(url):
        return url
    # mariadbd refuses to run as root unless told to; it runs as whoever runs the tests.
    user = f"--user={pwd.getpwuid(os.geteuid()).pw_name}"
    if not data.exists():
        subprocess.run(
            [install, "--no-defaults", user, f"--datadir={data}", "--auth-root-authentication-method=normal", "--skip-test-db"],
            capture_output=True,
            check=True,
        )
    print("no MySQL server at 127.0.0.1:3306: starting a throwaway MariaDB", file=sys.stderr)
    subprocess.Popen(
        [server, "--no-defaults", user, f"--datadir={data}", f"--socket={socket}", "--skip-networking",
         f"--pid-file={THROWAWAY_DIR / 'mysqld.pid'}", "--character-set-server=utf8mb4"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives this process, like the embedded PostgreSQL
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if reachable(url):
            return url
        time.sleep(0.5)
    return None


def ensure() -> str | None:
    """A URL of a reachable server (its `mysql` database), or None when there is none to be had."""
    if url := os.environ.get("ORECAST_TEST_MYSQL_URL"):
        if reachable(url):
            return url
    if reachable(MACHINE_URL):
        return MACHINE_URL
    return _start_throwaway()


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "ensure":
        print("usage: python -m tests.mysql_server ensure [--export]", file=sys.stderr)
        return 2
    url = ensure()
    if url is None:
        print(NO_SERVER, file=sys.stderr)
        return 0
    print(f"export ORECAST_TEST_MYSQL_URL='{url}'" if "--export" in argv else url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
