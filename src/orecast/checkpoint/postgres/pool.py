"""Checking out a psycopg pool's connections so that an outage is told at once and forgotten at once.

Shared by the checkpoint saver and the service's own tables: while the server is down a checkout
fails in about a second with StoreUnavailable (not after the pool's whole wait), and once it is back
the first checkout reopens the connections a restart left dead (not each failing a call in turn)."""

from __future__ import annotations

import psycopg
from psycopg import AsyncConnection, pq
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from orecast.checkpoint.errors import StoreTimeout, StoreUnavailable

# A checkout that waits this long asks the server directly whether it is there at all.
FIRST_WAIT_SECONDS = 1.0
PROBE_TIMEOUT_SECONDS = 3


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def check_connection(conn: AsyncConnection) -> None:
    """The pool's check on checkout: a connection left dead by a server restart or a killed backend is
    replaced before a call uses it, instead of failing that call.

    Without a round trip (psycopg_pool's `check_connection` sends an empty query: one more round trip
    for every put, put_writes and read, ~10 a turn): the server's goodbye (an error message, then the
    socket's end) is already waiting in the socket, and reading what is there tells.
    """
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("connection closed")
    conn.pgconn.consume_input()  # reads its last message, if any
    conn.pgconn.consume_input()  # then raises OperationalError if the socket was closed
    if conn.pgconn.status != pq.ConnStatus.OK:
        raise psycopg.OperationalError("connection lost")


class Checkout:
    """`await checkout()`: a checked, working connection of `pool` (give it back with the pool's
    `putconn`); StoreUnavailable at once while the server is down, StoreTimeout when all of the pool
    stays in use for `timeout` seconds."""

    def __init__(self, pool: AsyncConnectionPool, url: str, timeout: float) -> None:
        self.pool = pool
        self.url = url
        self.timeout = timeout
        # Set once the server was found unreachable: checkouts then ask it first instead of waiting.
        self.outage = False

    async def __call__(self) -> AsyncConnection:
        if not self.outage:
            try:
                return await self.pool.getconn(timeout=FIRST_WAIT_SECONDS)
            except PoolTimeout:
                pass
        # Busy pool or no server? A direct connection tells within the probe's timeout.
        try:
            probe = await AsyncConnection.connect(self.url, connect_timeout=PROBE_TIMEOUT_SECONDS)
        except psycopg.OperationalError as exc:
            self.outage = True
            raise StoreUnavailable(f"database unavailable: {first_line(exc)}") from None
        await probe.close()
        self.outage = False
        # The server is there: connections idle since before it went away are dead; reopen them now
        # rather than each failing its check (and the pool backing off) in turn.
        await self.pool.drain()
        try:
            return await self.pool.getconn(timeout=max(self.timeout - FIRST_WAIT_SECONDS, 0.1))
        except PoolTimeout:
            raise StoreTimeout(
                f"no free database connection after {self.timeout:g} s "
                f"(all {self.pool.max_size} of the pool in use)"
            ) from None
