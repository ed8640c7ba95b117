"""Model fits kept on disk between processes, so `auto` does not refit hundreds of models per run.

`forecast(method="auto")` ranks every candidate on ~120 rolling origins: several hundred ETS, ARIMA
and Theta fits, 20-40 s on a busy laptop. A fit depends only on the values it sees, the method and
its settings, so each one is stored under a hash of exactly those inputs, in a JSON file per series
in the user's cache directory (`$XDG_CACHE_HOME/orecast/fits/` on Linux). The hash *is* the data
version: new data (`orecast data update`) changes the slices of the newest origins only, so those are
refitted and the older ones are read back; revised history changes the hash and is refitted too.

JSON, never pickle: a cache file is data that any later version can read or ignore. A damaged or
foreign file is treated as empty. Writes go to a temporary file renamed into place, so a reader
never sees half a file; two processes writing at once lose each other's new entries, never the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

import numpy as np
import platformdirs

from orecast.market.methods import ModelPath

# Bump when a method's code changes its output: old entries then simply never match.
FORMAT = 3  # 3: fits by orecast.market.fits instead of statsmodels' optimiser
# Entries kept per series file: several data versions of every origin `auto` and a backtest touch.
MAX_ENTRIES = 20_000
# Closed-form methods cost microseconds; storing them would only grow the file.
STORED_METHODS = frozenset({"ets", "arima", "theta"})


def cache_dir() -> Path:
    """`$ORECAST_CACHE_DIR`, else the user's cache directory for orecast."""
    if explicit := os.environ.get("ORECAST_CACHE_DIR"):
        return Path(explicit)
    return platformdirs.user_cache_path("orecast", appauthor=False)


def fit_key(
    values: np.ndarray, method: str, steps: int, levels: tuple[int, ...], season: int
) -> str:
    digest = hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    digest.update(f"{FORMAT}|{method}|{steps}|{levels}|{season}".encode())
    return digest.hexdigest()[:40]


class FitStore:
    """The stored fits of one series: read once, written back once if anything was added."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, dict] = {}
        self._used: set[str] = set()
        self._dirty = False
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("format") == FORMAT:
                entries = data.get("fits")
                if isinstance(entries, dict):
                    self._entries = entries

    def get(self, key: str) -> ModelPath | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        try:
            path = ModelPath(
                mean=np.asarray(entry["mean"], dtype=float),
                lower={int(k): np.asarray(v, dtype=float) for k, v in entry["lower"].items()},
                upper={int(k): np.asarray(v, dtype=float) for k, v in entry["upper"].items()},
                fallback=bool(entry.get("fallback", False)),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        self._used.add(key)
        return path

    def put(self, key: str, path: ModelPath) -> None:
        self._entries[key] = {
            "mean": path.mean.tolist(),
            "lower": {str(k): v.tolist() for k, v in path.lower.items()},
            "upper": {str(k): v.tolist() for k, v in path.upper.items()},
            "fallback": path.fallback,
        }
        self._used.add(key)
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        entries = self._entries
        if len(entries) > MAX_ENTRIES:
            # Keep what this run used, then the newest of the rest (dicts keep insertion order).
            rest = [k for k in entries if k not in self._used]
            keep = set(self._used) | set(rest[len(rest) - max(0, MAX_ENTRIES - len(self._used)):])
            entries = {k: v for k, v in entries.items() if k in keep}
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"format": FORMAT, "fits": entries}, handle, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            # A read-only or full disk costs speed, never an answer.
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        self._dirty = False


_current: ContextVar[FitStore | None] = ContextVar("orecast_fit_store", default=None)


def current() -> FitStore | None:
    """The store model fits are read from and written to in this context, if any."""
    return _current.get()


@contextlib.contextmanager
def stored_fits(series_id: str) -> Iterator[FitStore | None]:
    """Within the block, model fits are looked up in (and added to) the series' cache file.

    Off when `ORECAST_FIT_CACHE=0`. Nested blocks share the outer store.
    """
    if os.environ.get("ORECAST_FIT_CACHE", "1") == "0" or _current.get() is not None:
        yield _current.get()
        return
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", series_id)[:80] or "series"
    store = FitStore(cache_dir() / "fits" / f"{name}.json")
    token = _current.set(store)
    try:
        yield store
    finally:
        _current.reset(token)
        store.save()
