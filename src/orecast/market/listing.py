"""`list_series`: the catalogue with the ranges actually present in the bundled data."""

from __future__ import annotations

from orecast.market.catalog import SPECS, SeriesInfo, get_spec
from orecast.market.loaders import _load_bundled, meta_of
from orecast.market.util import iso


def series_info(series_id: str) -> SeriesInfo:
    """One catalogue row; an unknown id raises `MarketError` naming close matches."""
    spec = get_spec(series_id)
    values = _load_bundled(spec.id)
    dropped = meta_of(values).dropped_missing
    notes = spec.notes + (f" {dropped} empty values dropped." if dropped else "")
    return SeriesInfo(
        id=spec.id, name_zh=spec.name_zh, name_en=spec.name_en, unit=spec.unit,
        frequency=spec.frequency, kind=spec.kind, start=iso(values.index[0]) or "",
        end=iso(values.index[-1]) or "", count=len(values), source=spec.source,
        licence=spec.licence, notes=notes.strip(),
    )


def list_series() -> list[SeriesInfo]:
    """Every bundled series: id, Chinese and English name, unit, frequency, range, source, licence."""
    return [series_info(spec.id) for spec in SPECS]
