"""What the store raises when the database, not the caller, is the problem: one line each, no secret."""

from __future__ import annotations


class StoreError(Exception):
    """The database could not do what was asked; nothing half-done was kept."""


class StoreTimeout(StoreError):
    """A statement or a lock wait took longer than the store's timeout (e.g. a row locked elsewhere)."""


class StoreUnavailable(StoreError):
    """The database cannot be reached (down, restarting, or the network is gone)."""


class ReadOnlyStoreError(StoreError):
    """A write to a store opened read-only (a SQLite file this process may not write)."""
