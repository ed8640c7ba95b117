"""Metadata filters (`alist(filter=…)`, `asearch_threads(metadata=…)`): what is accepted, and what matches.

Both dialects give the same answer: a row matches when its metadata *contains* the filter, as
PostgreSQL's `@>` defines it. Each key must be present with a value of the same JSON type and equal
(`1` matches `1` and `1.0`, never `true` or `"1"`; `None` matches JSON null, not a missing key); a nested
object matches an object holding at least its keys, recursively; a list matches a list holding each
of its elements. Keys are plain names (letters, digits, `_ . -`); list elements are scalars.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from orecast.checkpoint.core import FILTER_KEY


def _check_scalar(value: Any, where: str) -> None:
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"metadata filter value at {where} must be a finite number, not {value!r}")
        return
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError(f"metadata filter value at {where} contains a NUL character")
        return
    raise ValueError(
        f"metadata filter value at {where} must be a string, number, boolean, null, object or list, "
        f"not {type(value).__name__}"
    )


# The most conditions (keys and list elements, nested ones too) a filter holds: each is a clause, and
# SQLite refuses a statement whose expression tree is over 1,000 deep ("Expression tree is too large"),
# which a filter of ~500 keys reached while PostgreSQL answered it. No search needs more.
MAX_FILTER_CONDITIONS = 100


def _conditions(wanted: Mapping[str, Any]) -> int:
    count = 0
    for value in wanted.values():
        if isinstance(value, Mapping):
            count += _conditions(value)
        elif isinstance(value, list | tuple):
            count += max(1, len(value))
        else:
            count += 1
    return count


def check_metadata_filter(wanted: Mapping[str, Any], where: str = "", *, capped: bool = True) -> None:
    """Raise ValueError for a key or value the filter cannot match the same way on every dialect, or
    (`capped`) for a filter of more than MAX_FILTER_CONDITIONS conditions."""
    if capped and not where and isinstance(wanted, Mapping) and (count := _conditions(wanted)) > MAX_FILTER_CONDITIONS:
        raise ValueError(f"a metadata filter holds at most {MAX_FILTER_CONDITIONS} conditions, not {count}")
    if not isinstance(wanted, Mapping):
        raise ValueError(f"metadata filter{' at ' + where if where else ''} must be an object")
    for key, value in wanted.items():
        if not isinstance(key, str) or not FILTER_KEY.match(key):
            raise ValueError(f"invalid metadata filter key {key!r}: use letters, digits, '_', '.' or '-'")
        path = f"{where}.{key}" if where else key
        if isinstance(value, Mapping):
            check_metadata_filter(value, path)
        elif isinstance(value, list | tuple):
            for element in value:
                if isinstance(element, Mapping | list | tuple):
                    raise ValueError(f"metadata filter list at {path} may hold only scalars")
                _check_scalar(element, path)
        else:
            _check_scalar(value, path)
