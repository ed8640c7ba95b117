"""Fresh market data: download the newest public data, validate it, and use it instead of the
bundled files (which stay as the fallback).

    >>> from orecast.market.update import update_data, data_status
    >>> [r.to_dict() for r in update_data(["worldbank"])]   # doctest: +SKIP

Sources: `worldbank` (the Pink Sheet xlsx over HTTP; `ORECAST_WB_PINK_SHEET_URL` overrides the
address), and through the optional akshare extra `futures` (DCE/SHFE daily), `fx` (USD/CNH) and
`pmi` (NBS manufacturing PMI). Each file is validated (`validate.py`) before it is installed in the
user's data directory (`store.py`); a failed source changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import pandas as pd

from orecast.market.catalog import SPECS
from orecast.market.errors import MarketError
from orecast.market.update import china, worldbank
from orecast.market.update.download import download, source_url
from orecast.market.update.store import FileRecord, active_file, checksum, install
from orecast.market.update.validate import DataError, merge_and_validate

SOURCES: dict[str, tuple[str, ...]] = {
    "worldbank": worldbank.FILES,
    "futures": tuple(china.FUTURES),
    "fx": (china.FX_FILE,),
    "pmi": (china.PMI_FILE,),
}

__all__ = ["SOURCES", "DataError", "SeriesStatus", "UpdateResult", "data_status", "update_data"]


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """What happened to one file: installed (with its new last date) or why not."""

    source: str
    file: str
    ok: bool
    message: str
    last: str | None = None
    new_rows: int = 0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class SeriesStatus:
    """Where a series' data comes from and how old it is."""

    id: str
    file: str
    origin: str  # "downloaded" or "bundled"
    source: str
    last_date: str
    age_days: int
    fetched_at: str | None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


RawFetch = Callable[[], pd.DataFrame]


def _now() -> datetime:
    return datetime.now(UTC)


def _install(source: str, file: str, frame: pd.DataFrame, label: str, url: str) -> UpdateResult:
    current, _ = active_file(file)
    bundled = pd.read_csv(current)
    merged = merge_and_validate(file, bundled, frame)
    data = merged.to_csv(index=False, lineterminator="\n").encode()
    first, last = str(merged.iloc[0, 0]), str(merged.iloc[-1, 0])
    before = str(bundled.iloc[-1, 0])
    new_rows = int((merged.iloc[:, 0].astype(str) > before).sum())
    install(file, data, FileRecord(
        file=file, source=source, label=f"{label}, downloaded {_now().date().isoformat()}",
        url=url, fetched_at=_now().isoformat(timespec="seconds"), first=first, last=last,
        rows=len(merged), sha256=checksum(data),
    ))
    return UpdateResult(source, file, True, f"{new_rows} new rows, last {last}", last, new_rows)


def _update_worldbank() -> list[UpdateResult]:
    url = source_url("worldbank", worldbank.DEFAULT_URL)
    tables = worldbank.parse(download(url))
    return [_guarded("worldbank", file, lambda f=file: _install(
        "worldbank", f, tables[f], worldbank.LABEL, url)) for file in SOURCES["worldbank"]]


def _guarded(source: str, file: str, step: Callable[[], UpdateResult]) -> UpdateResult:
    try:
        return step()
    except MarketError as exc:
        return UpdateResult(source, file, False, str(exc))


def _china_label(file: str) -> str:
    if file == china.FX_FILE:
        return china.FX_LABEL
    if file == china.PMI_FILE:
        return china.PMI_LABEL
    return china.FUTURES_LABEL.format(exchange="DCE" if file.startswith("dce") else "SHFE")


def _convert(file: str, raw: pd.DataFrame) -> pd.DataFrame:
    if file == china.FX_FILE:
        return china.fx_frame(raw)
    if file == china.PMI_FILE:
        return china.pmi_frame(raw)
    return china.futures_frame(raw)


def update_data(
    sources: Iterable[str] | None = None, *, raw_frames: Mapping[str, RawFetch] | None = None
) -> list[UpdateResult]:
    """Download, validate and install the newest data of `sources` (default: all).

    `raw_frames` maps a file name to a call returning its frame in akshare's shape, in place of the
    akshare call (for offline use and tests). Never raises for a failed download or check: each
    file's result says what happened, and a failed file keeps the data in use.
    """
    chosen = list(sources) if sources else list(SOURCES)
    unknown = [s for s in chosen if s not in SOURCES]
    if unknown:
        raise MarketError(f"unknown data source {unknown[0]!r}; use {', '.join(SOURCES)}",
                          "unknown_source", source=unknown[0], choices=list(SOURCES))
    results: list[UpdateResult] = []
    for source in chosen:
        if source == "worldbank":
            try:
                results += _update_worldbank()
            except MarketError as exc:
                results += [UpdateResult(source, f, False, str(exc)) for f in SOURCES[source]]
            continue
        calls = {**china.fetchers(), **(raw_frames or {})}
        for file in SOURCES[source]:
            results.append(_guarded(source, file, lambda s=source, f=file, c=calls: _install(
                s, f, _convert(f, _fetch(c[f])), _china_label(f), "akshare")))
    from orecast.market.loaders import forget_loaded

    forget_loaded()
    return results


def _fetch(call: RawFetch) -> pd.DataFrame:
    try:
        return call()
    except MarketError:
        raise
    except Exception as exc:  # noqa: BLE001 - akshare raises requests/JSON/KeyError errors
        raise DataError(f"download failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}") from None


def data_status(today: datetime | None = None) -> list[SeriesStatus]:
    """Each catalogue series: downloaded or bundled, its source, last date and age in days."""
    from orecast.market.loaders import load_series

    today = today or _now()
    rows = []
    for spec in SPECS:
        _, record = active_file(spec.file)
        last = load_series(spec.id).index[-1]
        rows.append(SeriesStatus(
            id=spec.id, file=spec.file, origin="downloaded" if record else "bundled",
            source=record.label if record else spec.source, last_date=last.date().isoformat(),
            age_days=int((pd.Timestamp(today.date()) - last).days),
            fetched_at=record.fetched_at if record else None,
        ))
    return rows

