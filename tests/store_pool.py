"""Clean, migrated stores for the tests, made once and emptied for the next test instead of made anew.

A new PostgreSQL schema or MariaDB database migrated for each test cost 0.4–1.5 s (PostgreSQL 15 and
InnoDB sync every table and index they create to disk; dropping a MariaDB database takes as long
again), more than most tests themselves. Here a store is migrated once; after its test it is emptied
(DELETE of every table but the migrations': one commit, ~0.04 s) and handed to a later test. A
SQLite store is a copy of a migrated file (1 ms).

A store is used again only when nothing tells it from a new one: its schema (tables, columns, types,
defaults, indexes, constraints, views, triggers, storage options, grants, the migrations applied) is
the one a new store has, no other connection is still on it (a pool, a subprocess or a server the
test left running could write into the next test's store), and its rows went in one transaction.
Else it is left alone (the run's database, dropped at the end, takes it with it) and the next test
gets a new one. None of these stores ever had service tables: a test whose service made them leaves
its store behind.

Tests of migrations or of what a never-opened store does use `fresh_postgres_url`, `fresh_mysql_url`
or a new SQLite path, never these.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg

from orecast.checkpoint import open_checkpointer
from tests import mysql_server
from tests.pg_server import with_search_path

# How long a store's last connections may take to go away after its test (a pool closing, a killed
# subprocess whose server process has not yet seen the socket close).
SETTLE_SECONDS = 2.0


def _in_thread(coro: Any) -> Any:
    """Run a coroutine to its end from sync code, also inside a running event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _migrate(url: str) -> None:
    async with open_checkpointer(url):
        pass


class Stats:
    """How many stores were made, used again and left behind (and why): `ORECAST_TEST_POOL_STATS`."""

    def __init__(self) -> None:
        self.made = 0
        self.reused = 0
        self.left: dict[str, int] = {}

    def leave(self, why: str) -> None:
        self.left[why] = self.left.get(why, 0) + 1

    def __str__(self) -> str:
        return f"made {self.made}, used again {self.reused}, left behind {self.left}"


class Pool:
    """Stores handed out, emptied and handed out again; `take` and `give_back` are the dialect's."""

    stats: Stats

    def take(self) -> str:
        raise NotImplementedError

    def give_back(self, url: str) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def lend(self) -> Iterator[str]:
        url = self.take()
        yield url
        self.give_back(url)


class SqliteTemplate:
    """A migrated SQLite file, copied for each test: byte for byte the file a first open would make
    (but for the migrations' times)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "template.sqlite3"
        _in_thread(_migrate(f"sqlite:///{self.path}"))
        for suffix in ("-wal", "-shm"):  # the saver checkpoints and removes them when it closes
            assert not Path(f"{self.path}{suffix}").exists(), f"{self.path}{suffix} left behind"

    def copy_to(self, path: Path) -> str:
        shutil.copyfile(self.path, path)
        return f"sqlite:///{path}"


# A PostgreSQL schema's make-up, without its name: what a test could see of it but its rows.
_PG_SHAPE = """
SELECT 'rel', c.relname, c.relkind::text || c.relpersistence::text || c.relrowsecurity::text
       || c.relforcerowsecurity::text || COALESCE(c.reloptions::text, '') || COALESCE(c.relacl::text, '')
       || pg_get_userbyid(c.relowner),
       CASE c.relkind WHEN 'i' THEN pg_get_indexdef(c.oid) WHEN 'v' THEN pg_get_viewdef(c.oid)
                      WHEN 'm' THEN pg_get_viewdef(c.oid) END
FROM pg_class AS c WHERE c.relnamespace = %(ns)s
UNION ALL
SELECT 'col', c.relname || '.' || a.attnum, a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
       || ' ' || a.attnotnull::text || ' ' || a.attidentity::text || a.attgenerated::text || ' '
       || COALESCE(a.attcollation::regcollation::text, ''),
       pg_get_expr(d.adbin, d.adrelid)
FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid
LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relnamespace = %(ns)s AND a.attnum > 0
UNION ALL
SELECT 'con', r.relname || '.' || o.conname, o.contype::text, pg_get_constraintdef(o.oid)
FROM pg_constraint AS o LEFT JOIN pg_class AS r ON r.oid = o.conrelid WHERE o.connamespace = %(ns)s
UNION ALL
SELECT 'trg', r.relname || '.' || t.tgname, t.tgenabled::text, pg_get_triggerdef(t.oid)
FROM pg_trigger AS t JOIN pg_class AS r ON r.oid = t.tgrelid WHERE r.relnamespace = %(ns)s
UNION ALL
SELECT 'rule', r.relname || '.' || w.rulename, w.ev_type::text, pg_get_ruledef(w.oid)
FROM pg_rewrite AS w JOIN pg_class AS r ON r.oid = w.ev_class
WHERE r.relnamespace = %(ns)s AND w.rulename <> '_RETURN'
UNION ALL
SELECT 'pol', r.relname || '.' || p.polname, p.polcmd::text, pg_get_expr(p.polqual, p.polrelid)
FROM pg_policy AS p JOIN pg_class AS r ON r.oid = p.polrelid WHERE r.relnamespace = %(ns)s
UNION ALL
SELECT 'fn', p.proname, pg_get_function_identity_arguments(p.oid), p.prosrc
FROM pg_proc AS p WHERE p.pronamespace = %(ns)s
UNION ALL
SELECT 'type', t.typname, t.typtype::text, NULL
FROM pg_type AS t WHERE t.typnamespace = %(ns)s AND t.typrelid = 0 AND t.typelem = 0
UNION ALL
SELECT 'ns', '', COALESCE(n.nspacl::text, '') || pg_get_userbyid(n.nspowner), NULL
FROM pg_namespace AS n WHERE n.oid = %(ns)s
"""


class PgSchemas(Pool):
    """Clean migrated schemas in a PostgreSQL database of their own (made for this run, dropped at its
    end): one schema per store, emptied and used again."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.free: list[str] = []
        self.shape: list[tuple[Any, ...]] | None = None  # a new store's, taken from the first one
        self.stats = Stats()

    def take(self) -> str:
        if self.free:
            self.stats.reused += 1
            return with_search_path(self.database_url, self.free.pop())
        schema = f"p_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        url = with_search_path(self.database_url, schema)
        _in_thread(_migrate(url))
        self.stats.made += 1
        if self.shape is None:
            with psycopg.connect(self.database_url, autocommit=True) as conn:
                self.shape = self._shape(conn, schema)
        return url

    def give_back(self, url: str) -> None:
        schema = url.rsplit("search_path%3D", 1)[1]
        try:
            why = self._empty(schema)
        except psycopg.Error as exc:  # e.g. a lock still held: the next test gets another schema
            why = f"{type(exc).__name__}"
        if why:
            self.stats.leave(why)
        else:
            self.free.append(schema)

    def _empty(self, schema: str) -> str | None:
        """Empty `schema` for the next test; or why it cannot be (it is then left as it is)."""
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            if not _settled(lambda: conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            ).fetchone()[0] == 0):  # type: ignore[index]  # count(*) has a row
                return "connections left open"
            with conn.transaction():
                conn.execute("SET LOCAL lock_timeout = '2s'")
                if self._shape(conn, schema) != self.shape:
                    return "schema changed"
                tables = conn.execute(
                    "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace"
                    " AND relkind IN ('r', 'p') AND relname <> 'orecast_migrations'",
                    (schema,),
                ).fetchall()
                for (table,) in tables:
                    conn.execute(f'DELETE FROM "{schema}"."{table}"')
        return None

    @staticmethod
    def _shape(conn: psycopg.Connection, schema: str) -> list[tuple[Any, ...]]:
        ns = conn.execute("SELECT %s::regnamespace::oid", (schema,)).fetchone()[0]  # type: ignore[index]
        rows = conn.execute(_PG_SHAPE, {"ns": ns}).fetchall()
        migrations = conn.execute(f'SELECT version FROM "{schema}".orecast_migrations ORDER BY version').fetchall()
        quoted = (f'"{schema}".', f"{schema}.")
        return sorted(
            tuple(_without(value, quoted) if isinstance(value, str) else value for value in row) for row in rows
        ) + [("migrations", *(v for (v,) in migrations))]


def _without(text: str, names: Sequence[str]) -> str:
    for name in names:
        text = text.replace(name, "")
    return text


def _settled(check: Any) -> bool:
    """`check()` came true within SETTLE_SECONDS."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# A MariaDB database's make-up, without its name (statement, the database as parameter).
_MYSQL_SHAPE = (
    "SELECT 'table', table_name, table_type, engine, row_format, create_options, table_collation"
    " FROM information_schema.tables WHERE table_schema = %s",
    "SELECT 'column', table_name, column_name, ordinal_position, column_default, is_nullable, column_type,"
    " collation_name, extra, generation_expression FROM information_schema.columns WHERE table_schema = %s",
    "SELECT 'index', table_name, index_name, seq_in_index, column_name, non_unique, sub_part, index_type,"
    " collation FROM information_schema.statistics WHERE table_schema = %s",
    "SELECT 'view', table_name, view_definition, check_option, security_type FROM information_schema.views"
    " WHERE table_schema = %s",
    "SELECT 'constraint', table_name, constraint_name, constraint_type"
    " FROM information_schema.table_constraints WHERE constraint_schema = %s",
    "SELECT 'check', table_name, constraint_name, check_clause FROM information_schema.check_constraints"
    " WHERE constraint_schema = %s",
    "SELECT 'trigger', trigger_name, action_statement FROM information_schema.triggers WHERE trigger_schema = %s",
    "SELECT 'routine', routine_name, routine_type FROM information_schema.routines WHERE routine_schema = %s",
    "SELECT 'event', event_name, status FROM information_schema.events WHERE event_schema = %s",
    "SELECT 'grant', grantee, privilege_type FROM information_schema.schema_privileges WHERE table_schema = %s",
    "SELECT 'grant', grantee, table_name, privilege_type FROM information_schema.table_privileges"
    " WHERE table_schema = %s",
    "SELECT 'charset', default_character_set_name, default_collation_name FROM information_schema.schemata"
    " WHERE schema_name = %s",
)


class MysqlDatabases(Pool):
    """Clean migrated MariaDB databases of this run (named with the run's prefix, dropped at its end),
    emptied and used again."""

    def __init__(self, server_url: str, prefix: str) -> None:
        self.server_url = server_url
        self.prefix = prefix
        self.free: list[str] = []
        self.shape: list[tuple[Any, ...]] | None = None
        self.stats = Stats()

    def take(self) -> str:
        if self.free:
            self.stats.reused += 1
            return mysql_server.with_database(self.server_url, self.free.pop())
        name = f"{self.prefix}_p{uuid.uuid4().hex[:8]}"
        mysql_server.run_sql(self.server_url, f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
        url = mysql_server.with_database(self.server_url, name)
        _in_thread(_migrate(url))
        self.stats.made += 1
        if self.shape is None:
            self.shape = _in_thread(self._shape(name))
        return url

    def give_back(self, url: str) -> None:
        name = url.rsplit("/", 1)[1].split("?")[0]
        try:
            why = _in_thread(self._empty(name))
        except Exception as exc:  # e.g. a lock still held (the driver's errors have no common base)
            why = f"{type(exc).__name__}"
        if why:
            self.stats.leave(why)
            mysql_server.run_sql(self.server_url, f"DROP DATABASE IF EXISTS `{name}`")
        else:
            self.free.append(name)

    async def _empty(self, name: str) -> str | None:
        import asyncmy

        from orecast.checkpoint.mysql.saver import connect_kwargs

        conn = await asyncmy.connect(**connect_kwargs(self.server_url), autocommit=True, connect_timeout=3)
        try:
            async with conn.cursor() as cur:
                deadline = time.monotonic() + SETTLE_SECONDS
                while True:
                    await cur.execute(
                        "SELECT COUNT(*) FROM information_schema.processlist WHERE db = %s AND id <> CONNECTION_ID()",
                        (name,),
                    )
                    if (await cur.fetchone())[0] == 0:
                        break
                    if time.monotonic() > deadline:
                        return "connections left open"
                    await asyncio.sleep(0.02)
                if await self._shape(name, cur) != self.shape:
                    return "schema changed"
                await cur.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
                    " AND table_type = 'BASE TABLE' AND table_name <> 'orecast_migrations'",
                    (name,),
                )
                tables = [table for (table,) in await cur.fetchall()]
                await cur.execute("SET SESSION innodb_lock_wait_timeout = 2")
                await cur.execute("BEGIN")
                for table in tables:
                    await cur.execute(f"DELETE FROM `{name}`.`{table}`")
                await cur.execute("COMMIT")
        finally:
            conn.close()
        return None

    async def _shape(self, name: str, cur: Any = None) -> list[tuple[Any, ...]]:
        if cur is None:
            import asyncmy

            from orecast.checkpoint.mysql.saver import connect_kwargs

            conn = await asyncmy.connect(**connect_kwargs(self.server_url), autocommit=True, connect_timeout=3)
            try:
                async with conn.cursor() as cur:
                    return await self._shape(name, cur)
            finally:
                conn.close()
        rows: list[tuple[Any, ...]] = []
        for sql in _MYSQL_SHAPE:
            await cur.execute(sql, (name,))
            rows += [tuple(_without(v, (f"`{name}`.", f"{name}.")) if isinstance(v, str) else v for v in row)
                     for row in await cur.fetchall()]
        await cur.execute(f"SELECT version FROM `{name}`.orecast_migrations ORDER BY version")
        return sorted(rows, key=repr) + [("migrations", *(v for (v,) in await cur.fetchall()))]
