"""The SQLite dialect: the embedded default."""

from orecast.checkpoint.sqlite.saver import SqliteCheckpointer

__all__ = ["SqliteCheckpointer"]
