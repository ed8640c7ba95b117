"""A user's CSV file read as text, or one true line saying why it is none.

A path that exists but is no regular file was "CSV file not found"; one that is a device or a pipe must
not even be opened (`/dev/zero` never ends, a FIFO blocks until someone writes), and a huge file would
take the memory before pandas said anything. Files exported by Chinese Excel are GB18030 (GBK), not
UTF-8: they are read as such when they are not UTF-8.
"""

from __future__ import annotations

from pathlib import Path

from orecast.file_kinds import special_kind
from orecast.market.errors import MarketError

# A price series is kilobytes (a century of daily prices is about 1 MiB); a larger file is no series.
MAX_CSV_BYTES = 32 * 2**20


def _unreadable(path: Path, why: str) -> MarketError:
    return MarketError(f"cannot read {path}: {why}", "csv_unreadable", path=str(path))


def read_csv_text(path: Path) -> str:
    """The text of the CSV file at `path` (UTF-8, with or without a BOM, else GB18030)."""
    try:
        info = path.stat()  # follows links: a link to /dev/zero is a device
    except (FileNotFoundError, NotADirectoryError):
        raise MarketError(f"CSV file not found: {path}", "csv_not_found", path=str(path)) from None
    except OSError as exc:
        raise _unreadable(path, exc.strerror or type(exc).__name__) from None
    kind = special_kind(info.st_mode)
    if kind is not None:
        raise MarketError(f"{path} is a {kind}, not a CSV file", "csv_not_a_file", path=str(path), kind=kind)
    try:
        with path.open("rb") as file:
            data = file.read(MAX_CSV_BYTES + 1)  # at most this much, whatever the size said
    except OSError as exc:
        raise _unreadable(path, exc.strerror or type(exc).__name__) from None
    if len(data) > MAX_CSV_BYTES:
        raise MarketError(
            f"{path} is larger than {MAX_CSV_BYTES // 2**20} MiB: too large for a CSV of one series",
            "csv_too_large", path=str(path), limit_mib=MAX_CSV_BYTES // 2**20,
        )
    if b"\0" in data:
        raise _unreadable(path, "it holds binary data, not CSV text")
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise _unreadable(path, "it is neither UTF-8 nor GB18030 (GBK) text")
