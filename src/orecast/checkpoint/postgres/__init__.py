"""The PostgreSQL dialect: production, many app replicas on one database."""

from orecast.checkpoint.postgres.saver import PostgresCheckpointer

__all__ = ["PostgresCheckpointer"]
