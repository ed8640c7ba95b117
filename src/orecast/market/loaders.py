"""Loading series: bundled CSVs by id, a user's CSV, or a `pandas.Series` passed straight in.

Every loaded series is a float `pandas.Series` on a sorted `DatetimeIndex`, with no NaNs, named by
its id, and carrying its metadata (unit, source, …) in `series.attrs`, so a series handed back to
`describe` or `forecast` still knows where it came from.
"""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from orecast.market.catalog import PANDAS_FREQ, SeriesSpec, get_spec
from orecast.market.csv_file import read_csv_text
from orecast.market.errors import MarketError
from orecast.market.update.store import active_file

DateLike = str | pd.Timestamp | None
SeriesLike = str | Path | pd.Series

# User-facing resampling codes; pandas' own aliases changed across versions ("M" vs "ME").
_FREQ_CODES: dict[str, str] = {
    "D": "daily", "B": "daily", "W": "weekly", "M": "monthly", "MS": "monthly", "ME": "monthly",
    "Q": "quarterly", "QS": "quarterly", "A": "annual", "Y": "annual", "YS": "annual",
}
# A Chinese spreadsheet's date column: 日期 (date), 时间 (time), 月份 (month), 交易日期 (trading date).
_CHINESE_DATE_HEADERS = ("日期", "时间", "月份", "交易日期")
_ORDER = ["daily", "weekly", "monthly", "quarterly", "annual"]


@dataclass(frozen=True, slots=True)
class SeriesMeta:
    """What a series is: travels in `series.attrs["orecast"]` and in every answer's header."""

    id: str
    name_zh: str
    name_en: str
    unit: str
    frequency: str
    kind: str
    source: str
    licence: str
    dropped_missing: int = 0

    @property
    def log_model(self) -> bool:
        return self.kind in ("price", "index", "fx")

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _meta_from_spec(spec: SeriesSpec, dropped: int = 0) -> SeriesMeta:
    _, downloaded = active_file(spec.file)
    return SeriesMeta(
        id=spec.id, name_zh=spec.name_zh, name_en=spec.name_en, unit=spec.unit,
        frequency=spec.frequency, kind=spec.kind,
        source=downloaded.label if downloaded is not None else spec.source, licence=spec.licence,
        dropped_missing=dropped,
    )


def forget_loaded() -> None:
    """Drop the series read so far in this process, so the next load sees newly installed data."""
    _read_bundled_csv.cache_clear()
    _load_bundled.cache_clear()


def _attach(series: pd.Series, meta: SeriesMeta) -> pd.Series:
    series.attrs = {"orecast": meta.to_dict()}
    return series


@lru_cache(maxsize=16)
def _read_bundled_csv(file: str) -> pd.DataFrame:
    # The frame is cached and shared: callers copy the column they need and never mutate it.
    # A validated download (`orecast data update`) replaces the bundled file; see market/update/.
    path, _ = active_file(file)
    with path.open("rb") as handle:
        frame = pd.read_csv(handle)
    first = frame.columns[0]
    if first == "year":
        frame.index = pd.to_datetime(frame[first].astype(str), format="%Y")
    else:
        frame.index = pd.to_datetime(frame[first], format="%Y-%m-%d")
    return frame.sort_index()


@lru_cache(maxsize=64)
def _load_bundled(series_id: str) -> pd.Series:
    spec = get_spec(series_id)
    frame = _read_bundled_csv(spec.file)
    values = pd.to_numeric(frame[spec.column], errors="coerce").astype(float)
    if spec.fallback_column is not None:
        # Settlement is missing on a few hundred futures days; the close of the same day is the
        # nearest price, and dropping the day would open gaps the models would treat as no change.
        values = values.fillna(pd.to_numeric(frame[spec.fallback_column], errors="coerce"))
    if spec.first_date is not None:
        values = values.loc[spec.first_date:]
    # Empty cells before a series starts are expected (the World Bank file is wide); count the rest.
    first_valid = values.first_valid_index()
    values = values.loc[first_valid:] if first_valid is not None else values.iloc[0:0]
    dropped = int(values.isna().sum())
    values = values.dropna()
    values.index.name = "date"
    values.name = spec.id
    return _attach(values, _meta_from_spec(spec, dropped))


def meta_of(series: pd.Series) -> SeriesMeta:
    """The metadata of a loaded series, or a best guess for a bare `pandas.Series`."""
    stored = series.attrs.get("orecast")
    if isinstance(stored, dict):
        return SeriesMeta(**stored)
    name = str(series.name) if series.name is not None else "custom"
    positive = bool(len(series)) and bool((series.dropna() > 0).all())
    return SeriesMeta(
        id=name, name_zh=name, name_en=name, unit=str(series.attrs.get("unit", "")),
        frequency=infer_frequency(series.index), kind="price" if positive else "diffusion",
        source=str(series.attrs.get("source", "user-supplied series")), licence="user-supplied",
    )


def infer_frequency(index: pd.Index) -> str:
    """daily / weekly / monthly / quarterly / annual from the median spacing of the dates."""
    if not isinstance(index, pd.DatetimeIndex) or len(index) < 3:
        raise MarketError("a series needs a DatetimeIndex with at least 3 dates", "bad_index")
    days = float(np.median(np.diff(index.values).astype("timedelta64[D]").astype(float)))
    if days <= 4:
        return "daily"
    if days <= 10:
        return "weekly"
    if days <= 45:
        return "monthly"
    if days <= 120:
        return "quarterly"
    return "annual"


def load_csv(
    path: str | Path,
    *,
    date_column: str | None = None,
    value_column: str | None = None,
    name: str | None = None,
    unit: str = "",
) -> pd.Series:
    """A user's CSV as a series: a date column (named `date` unless given) and a value column.

    Example: `load_csv("my_prices.csv", value_column="close")`.
    """
    path = Path(path)
    text = read_csv_text(path)
    try:
        frame = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise MarketError(f"cannot read {path} as CSV: {exc}".splitlines()[0], "csv_unreadable",
                          path=str(path)) from None
    columns = {str(c).strip().lower(): c for c in frame.columns}
    date_key = (date_column or "").lower() or next(
        (c for c in ("date", "ds", "time", "timestamp", "month", "day", *_CHINESE_DATE_HEADERS) if c in columns), None
    )
    if date_key is None or date_key not in columns:
        raise MarketError(
            f"{path.name} has no date column (columns: {', '.join(map(str, frame.columns))}); "
            "name one `date` or pass date_column",
            "csv_no_date_column", file=path.name, columns=[str(c) for c in frame.columns],
        )
    others = [c for k, c in columns.items() if k != date_key]
    if value_column is not None:
        if value_column not in frame.columns:
            raise MarketError(f"{path.name} has no column {value_column!r}", "csv_no_column",
                              file=path.name, column=str(value_column))
        value_col = value_column
    else:
        numeric = [c for c in others if pd.to_numeric(frame[c], errors="coerce").notna().any()]
        if not numeric:
            raise MarketError(f"{path.name} has no numeric value column", "csv_no_numeric",
                              file=path.name)
        value_col = numeric[0]
    dates = pd.to_datetime(frame[columns[date_key]], errors="coerce")
    if dates.isna().all():
        raise MarketError(f"column {columns[date_key]!r} of {path.name} holds no readable dates",
                          "csv_bad_dates", file=path.name, column=str(columns[date_key]))
    values = pd.Series(
        pd.to_numeric(frame[value_col], errors="coerce").to_numpy(dtype=float),
        index=pd.DatetimeIndex(dates, name="date"),
    )
    missing = int(values.isna().sum() + values.index.isna().sum())
    values = values[values.notna() & values.index.notna()].sort_index()
    values = values[~values.index.duplicated(keep="last")]
    if len(values) < 3:
        raise MarketError(f"{path.name} has fewer than 3 dated numeric rows", "csv_too_short",
                          file=path.name)
    series_id = name or path.stem
    values.name = series_id
    meta = SeriesMeta(
        id=series_id, name_zh=series_id, name_en=series_id, unit=unit,
        frequency=infer_frequency(values.index),
        kind="price" if bool((values > 0).all()) else "diffusion",
        source=f"user file {path.name} (column {value_col})", licence="user-supplied",
        dropped_missing=missing,
    )
    return _attach(values, meta)


def parse_date(value: DateLike, what: str) -> pd.Timestamp | None:
    """`value` as a timestamp (None for no date); a MarketError naming `what` when it is not a date."""
    if value is None or value == "":
        return None
    try:
        return pd.Timestamp(value)
    except (ValueError, TypeError):
        raise MarketError(f"{what} {value!r} is not a date (use YYYY-MM-DD or YYYY-MM)", "bad_date",
                          what=what, value=str(value)) from None


def _resolve(series: SeriesLike) -> pd.Series:
    if isinstance(series, pd.Series):
        if not isinstance(series.index, pd.DatetimeIndex):
            raise MarketError("a pandas.Series must have a DatetimeIndex", "bad_index")
        meta = meta_of(series)
        clean = pd.to_numeric(series, errors="coerce").astype(float)
        clean = clean[clean.notna()].sort_index()
        if len(clean) < 3:
            raise MarketError(f"series {meta.id!r} has fewer than 3 numeric values", "too_few_values",
                              series=meta.id)
        clean.name = meta.id
        return _attach(clean, meta)
    text = str(series)
    if text.lower().endswith(".csv") or Path(text).suffix or "/" in text:
        return load_csv(text)
    return _load_bundled(text).copy()


def load_series(
    series: SeriesLike,
    start: DateLike = None,
    end: DateLike = None,
    freq: str | None = None,
    *,
    how: str | None = None,
) -> pd.Series:
    """A series by id (see `list_series`), CSV path or `pandas.Series`, cut to [start, end].

    `freq` ("W", "M", "Q", "A") resamples to a coarser frequency. Prices are averaged over the
    period by default, the World Bank's convention, so a monthly DCE series is comparable with the
    World Bank's monthly averages; pass `how="last"` for end-of-period values. Quantities are summed.
    """
    values = _resolve(series)
    meta = meta_of(values)
    lo, hi = parse_date(start, "start"), parse_date(end, "end")
    if lo is not None and hi is not None and lo > hi:
        raise MarketError(f"start {start} is after end {end}", "start_after_end", start=str(start),
                          end=str(end))
    # Partial strings ("2024", "2024-06") select whole periods, as in pandas indexing.
    values = values.loc[start if isinstance(start, str) else lo : end if isinstance(end, str) else hi]
    if values.empty:
        full = _resolve(series)
        raise MarketError(
            f"no data for {meta.id} between {start or 'the start'} and {end or 'the end'}; "
            f"it covers {full.index[0].date()} .. {full.index[-1].date()}",
            "no_data_in_range", series=meta.id, start=None if start is None else str(start),
            end=None if end is None else str(end), first=str(full.index[0].date()),
            last=str(full.index[-1].date()),
        )
    if freq:
        values, meta = _resample(values, meta, freq, how)
    values.name = meta.id
    return _attach(values, meta)


def _resample(
    values: pd.Series, meta: SeriesMeta, freq: str, how: str | None
) -> tuple[pd.Series, SeriesMeta]:
    target = _FREQ_CODES.get(freq.strip().upper())
    if target is None:
        raise MarketError(f"unknown freq {freq!r}; use one of W, M, Q, A", "unknown_freq", freq=str(freq))
    if _ORDER.index(target) < _ORDER.index(meta.frequency):
        raise MarketError(f"cannot resample {meta.frequency} {meta.id} to finer {target} data",
                          "finer_freq", series=meta.id, frequency=meta.frequency, target=target)
    how = how or ("sum" if meta.kind == "quantity" else "mean")
    if how not in ("mean", "last", "sum", "max", "min", "first"):
        raise MarketError(f"unknown aggregation {how!r}; use mean, last, sum, max, min or first",
                          "bad_aggregation", how=str(how))
    if target == meta.frequency:
        return values, meta
    resampled = getattr(values.resample(PANDAS_FREQ[target]), how)().dropna()
    return resampled, SeriesMeta(**{**meta.to_dict(), "frequency": target})
