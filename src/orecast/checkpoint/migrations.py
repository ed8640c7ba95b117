"""Numbered schema migrations per dialect: `sqlite/migrations/NNN_name.sql`, `postgres/migrations/…`."""

from __future__ import annotations

import re
from importlib import resources

_NUMBERED = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def pending(dialect: str, current: int) -> list[tuple[int, str]]:
    """(version, script) of each migration newer than `current`, in order."""
    folder = resources.files(f"orecast.checkpoint.{dialect}") / "migrations"
    found = []
    for entry in folder.iterdir():
        match = _NUMBERED.match(entry.name)
        if match and int(match.group(1)) > current:
            found.append((int(match.group(1)), entry.read_text(encoding="utf-8")))
    return sorted(found)


def latest(dialect: str) -> int:
    versions = [v for v, _ in pending(dialect, 0)]
    return max(versions, default=0)


def statements(script: str) -> list[str]:
    """Split a migration script on semicolons that end a line (our scripts hold no procedures)."""
    without_comments = "\n".join(
        line for line in script.splitlines() if not line.lstrip().startswith("--")
    )
    return [s.strip() for s in re.split(r";\s*$", without_comments, flags=re.M) if s.strip()]
