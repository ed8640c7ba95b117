"""Where downloaded data lives: CSV files in the user's data directory, named like the bundled ones,
and a manifest (JSON) saying where each came from and its checksum.

A downloaded file is used instead of the bundled one only while the manifest vouches for it (same
SHA-256 as when it was validated); a file edited, truncated or left half-written is ignored, and the
bundled data, which ships with the package, is always there as the fallback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import platformdirs

MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What the manifest says about one downloaded file."""

    file: str
    source: str  # e.g. "worldbank"
    label: str  # the citation shown in answers
    url: str
    fetched_at: str  # ISO UTC
    first: str
    last: str
    rows: int
    sha256: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def market_dir() -> Path:
    """`$ORECAST_MARKET_DIR`, else `market/` in the user's data directory."""
    if explicit := os.environ.get("ORECAST_MARKET_DIR"):
        return Path(explicit)
    return platformdirs.user_data_path("orecast", appauthor=False) / "market"


def bundled_path(file: str) -> Path:
    return Path(str(resources.files("orecast.market").joinpath("data").joinpath(file)))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(folder: Path | None = None) -> dict[str, FileRecord]:
    folder = folder or market_dir()
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        return {name: FileRecord(**entry) for name, entry in data.get("files", {}).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def active_file(file: str) -> tuple[Path, FileRecord | None]:
    """The CSV to read for `file`: the downloaded one when the manifest vouches for it, else the
    bundled one (record None)."""
    folder = market_dir()
    record = read_manifest(folder).get(file)
    path = folder / file
    if record is not None:
        with contextlib.suppress(OSError):
            if _sha256(path) == record.sha256:
                return path, record
    return bundled_path(file), None


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def install(file: str, csv_bytes: bytes, record: FileRecord) -> None:
    """Put a validated file in place, then the manifest entry that vouches for it (in this order, so
    a crash between the two leaves a file the manifest does not vouch for: the bundled one is used)."""
    folder = market_dir()
    _write_atomic(folder / file, csv_bytes)
    records = read_manifest(folder)
    records[file] = record
    payload = {"format": 1, "files": {name: r.to_dict() for name, r in sorted(records.items())}}
    _write_atomic(folder / MANIFEST, json.dumps(payload, indent=2, ensure_ascii=False).encode())


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
