"""Importing threads from LangGraph's official savers (`langgraph-checkpoint-postgres`,
`langgraph-checkpoint-sqlite`) into an orecast store — the migration path, see docs/migrating.md.

    async with open_source("langgraph-sqlite", "checkpoints.sqlite") as source:
        report = await import_threads(source, saver)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from orecast.checkpoint.importer.decoding import RefusedValue
from orecast.checkpoint.importer.postgres_source import PostgresSource
from orecast.checkpoint.importer.run import ImportReport, import_threads
from orecast.checkpoint.importer.source import Source
from orecast.checkpoint.importer.sqlite_source import SqliteSource
from orecast.checkpoint.urls import parse_url

FORMATS = ("langgraph-postgres", "langgraph-sqlite")

__all__ = ["FORMATS", "ImportReport", "RefusedValue", "Source", "import_threads", "open_source"]


@contextlib.asynccontextmanager
async def open_source(format: str, url: str) -> AsyncIterator[Source]:
    """Open an official saver's database read-only.

    `format` is one of `FORMATS`; `url` is `postgresql://…` for langgraph-postgres, and a file path or
    `sqlite:///path` for langgraph-sqlite.
    """
    if format == "langgraph-sqlite":
        path = parse_url(url).target if url.startswith("sqlite://") else url
        source: Source = SqliteSource(path)
    elif format == "langgraph-postgres":
        parsed = parse_url(url)
        if parsed.scheme != "postgresql":
            raise ValueError(f"langgraph-postgres needs a postgresql:// URL, not {parsed.redacted()}")
        source = await PostgresSource.connect(parsed.target, f"langgraph-postgres {parsed.redacted()}")
    else:
        raise ValueError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    try:
        yield source
    finally:
        await source.aclose()
