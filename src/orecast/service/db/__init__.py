"""The service's own tables (assistants, runs) on the checkpoint store's database.

Kept in service-owned numbered migrations (`db/{sqlite,postgres,mysql}/NNN_*.sql`, versions in
`service_migrations`) rather than the checkpoint package's: the checkpoint store stays usable without
the service (imports flow service → checkpoint), and the two schemas evolve without sharing numbers.
"""

from __future__ import annotations

from orecast.service.db.connection import Db, Tx, open_db

__all__ = ["Db", "Tx", "open_db"]
