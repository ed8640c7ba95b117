"""Database URLs: which store to open, and the default one."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import platformdirs
import psycopg
from psycopg.conninfo import conninfo_to_dict

DEFAULT_SQLITE_NAME = "orecast.sqlite3"
# Query options of a postgresql:// or mysql:// URL that are the store's, not the driver's
# (see postgres/timeouts.py).
STORE_OPTIONS = ("statement_timeout", "lock_timeout")


@dataclass(frozen=True)
class StoreUrl:
    scheme: str  # "sqlite", "postgresql", "mysql" or "memory"
    target: str  # a file path / ":memory:" for sqlite, the conninfo for postgresql, the URL for mysql
    options: dict[str, str] = field(default_factory=dict)  # the store's own query options

    def redacted(self) -> str:
        """The URL without its password (in the user part or a `password=` query), for messages."""
        if self.scheme == "memory":
            return "memory://"
        if self.scheme not in ("postgresql", "mysql"):
            return self.target
        return _redact(self.target)

    def scrub(self, text: str) -> str:
        """`text` (e.g. a driver's error message) with this URL's password masked."""
        if self.scheme == "mysql":
            password = urlsplit(self.target).password
            return text.replace(unquote(password), "***") if password else text
        if self.scheme != "postgresql":
            return text
        try:
            password = conninfo_to_dict(self.target).get("password")
        except psycopg.Error:
            password = None
        if password:
            text = text.replace(str(password), "***")
        return text


def _redact(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:***@{hostport}"
    query = "&".join(
        f"{piece.split('=', 1)[0]}=***" if unquote(piece.split("=", 1)[0]) == "password" else piece
        for piece in parts.query.split("&")
    )
    return _unsplit(parts._replace(netloc=netloc, query=query))


def _unsplit(parts: SplitResult) -> str:
    """`urlunsplit`, keeping the `//` of an empty host (which it drops for schemes it does not know):
    `postgresql://` (the local server) was shown as "postgresql:"."""
    joined = urlunsplit(parts)
    if parts.netloc or not parts.scheme or joined.startswith(f"{parts.scheme}://"):
        return joined
    return f"{parts.scheme}://{joined[len(parts.scheme) + 1:]}"


def _masked(url: str) -> str:
    """A URL that did not parse, for a message: everything between the user name and the last `@`
    (a password, or a token written as the user) masked, as `redacted()` does for a good one."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    userinfo, at, tail = rest.rpartition("@")
    if not at:
        return url
    user, colon, _password = userinfo.partition(":")
    return f"{scheme}{sep}{user}:***@{tail}" if colon else f"{scheme}{sep}***@{tail}"


def _postgres_url(url: str) -> StoreUrl:
    target = "postgresql://" + url.split("://", 1)[1]
    parts = urlsplit(target)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    options = {k: v for k, v in pairs if k in STORE_OPTIONS}
    if options:
        rest = [(k, v) for k, v in pairs if k not in STORE_OPTIONS]
        target = _unsplit(parts._replace(query=urlencode(rest, quote_via=quote)))
    try:
        conninfo_to_dict(target)  # an unknown query option fails here, in one line, not at connect
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        bad = StoreUrl("postgresql", target)
        raise ValueError(f"bad PostgreSQL URL {bad.redacted()}: {bad.scrub(reason)}") from None
    return StoreUrl("postgresql", target, options)


def _mysql_url(url: str) -> StoreUrl:
    target = "mysql://" + url.split("://", 1)[1]
    parts = urlsplit(target)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    options = {k: v for k, v in pairs if k in STORE_OPTIONS}
    rest = [(k, v) for k, v in pairs if k not in STORE_OPTIONS]
    target = _unsplit(parts._replace(query=urlencode(rest, quote_via=quote)))
    if not parts.path.strip("/"):
        bad = StoreUrl("mysql", target)
        raise ValueError(f"bad MySQL URL {bad.redacted()}: name the database, mysql://user:pass@host:3306/db")
    return StoreUrl("mysql", target, options)


def parse_url(url: str) -> StoreUrl:
    """Understand `sqlite:///rel.db`, `sqlite:////abs.db`, `sqlite:///:memory:`, `postgres(ql)://…`,
    `mysql://…` (or `mariadb://…`), `memory://`."""
    if url.startswith("memory://"):
        return StoreUrl("memory", "")
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://") :]
        if not rest.startswith("/") or rest == "/":
            raise ValueError(f"bad SQLite URL {_masked(url)!r}: use sqlite:///relative.db or sqlite:////abs.db")
        path = rest[1:]
        return StoreUrl("sqlite", path)
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return _postgres_url(url)
    if url.startswith("mysql://") or url.startswith("mariadb://"):
        return _mysql_url(url)
    raise ValueError(
        f"unsupported database URL {url.split('://')[0] + '://…' if '://' in url else _masked(url)!r}: "
        "use sqlite:///path.db, postgresql://…, mysql://… or memory://"
    )


def default_sqlite_path() -> Path:
    """`orecast.sqlite3` in the user's data directory (`$XDG_DATA_HOME/orecast` on Linux)."""
    return platformdirs.user_data_path("orecast", appauthor=False) / DEFAULT_SQLITE_NAME


def default_database_url() -> str:
    """`ORECAST_DATABASE_URL`, else `CHECKPOINT_DB` (a SQLite file path), else the SQLite file
    `default_sqlite_path()`: the same store whatever the current directory.

    Nothing is created here: opening the store (`open_checkpointer`) creates the file and its folder.
    """
    if url := os.environ.get("ORECAST_DATABASE_URL"):
        return url
    if path := os.environ.get("CHECKPOINT_DB"):
        return f"sqlite:///{path}"  # an absolute path gives the four slashes of sqlite:////abs.db
    return f"sqlite:///{default_sqlite_path()}"
