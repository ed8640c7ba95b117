"""How long a PostgreSQL statement may run and a lock may be waited for, per connection.

Without them a row locked by another session (a stuck transaction, a manual `SELECT … FOR UPDATE`)
makes a turn wait forever. Each comes from, in order: the `open_checkpointer` keyword, the URL query
(`?statement_timeout=30&lock_timeout=10`), the environment (`ORECAST_PG_STATEMENT_TIMEOUT`,
`ORECAST_PG_LOCK_TIMEOUT`), the default. Seconds; 0 turns the timeout off.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

STATEMENT_TIMEOUT_SECONDS = 30.0
LOCK_TIMEOUT_SECONDS = 10.0
ENVIRONMENT = {
    "statement_timeout": "ORECAST_PG_STATEMENT_TIMEOUT",
    "lock_timeout": "ORECAST_PG_LOCK_TIMEOUT",
}
DEFAULTS = {"statement_timeout": STATEMENT_TIMEOUT_SECONDS, "lock_timeout": LOCK_TIMEOUT_SECONDS}


@dataclass(frozen=True)
class Timeouts:
    statement: float = STATEMENT_TIMEOUT_SECONDS
    lock: float = LOCK_TIMEOUT_SECONDS

    @property
    def settings(self) -> tuple[str, str]:
        """(statement_timeout, lock_timeout) as PostgreSQL settings, in milliseconds."""
        return f"{round(self.statement * 1000)}ms", f"{round(self.lock * 1000)}ms"


def _seconds(value: object, source: str) -> float:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{source} must be a number of seconds, not {value!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{source} must be a number of seconds >= 0, not {value!r}")
    return seconds


def resolve_timeouts(
    url_options: Mapping[str, str], statement: float | None = None, lock: float | None = None
) -> Timeouts:
    """The timeouts to use, from the keywords, else the URL query, else the environment, else defaults."""
    chosen: dict[str, float] = {}
    for name, given in (("statement_timeout", statement), ("lock_timeout", lock)):
        if given is not None:
            chosen[name] = _seconds(given, name)
        elif name in url_options:
            chosen[name] = _seconds(url_options[name], f"{name} in the database URL")
        elif (env := os.environ.get(ENVIRONMENT[name])) is not None:
            chosen[name] = _seconds(env, ENVIRONMENT[name])
        else:
            chosen[name] = DEFAULTS[name]
    return Timeouts(chosen["statement_timeout"], chosen["lock_timeout"])
