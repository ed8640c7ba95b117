"""The World Bank Pink Sheet: `CMO-Historical-Data-Monthly.xlsx`, sheets "Monthly Prices" and
"Monthly Indices", turned into the three bundled World Bank files.

Layout of both sheets (every edition since at least 2015): a few title rows, a row of series names
("Iron ore, cfr spot", "Crude oil, Brent" …), a row of units, sometimes a row of codes, then one
row per month whose first cell reads `1960M01`. Columns are found by their names, not positions,
because the World Bank inserts new commodities between editions.
"""

from __future__ import annotations

import io
import re

import pandas as pd

from orecast.market.update.validate import DataError

PRICES_SHEET = "Monthly Prices"
INDICES_SHEET = "Monthly Indices"
DEFAULT_URL = (
    "https://thedocs.worldbank.org/en/doc/18675f1d1639c7a34d463f59263ba0a2-0050012025/related/"
    "CMO-Historical-Data-Monthly.xlsx"
)
FILES = ("worldbank_commodities_monthly.csv", "worldbank_price_indices_monthly.csv",
         "iron_ore_monthly_worldbank.csv")
LABEL = "World Bank Commodity Price Data (The Pink Sheet), monthly"
_MONTH = re.compile(r"^\s*(\d{4})M(\d{2})\s*$")

# Bundled column -> how the series is named in the sheet (matched case-insensitively, after
# collapsing spaces, as a prefix, so footnote marks such as "**" do not matter).
PRICE_COLUMNS: dict[str, str] = {
    "iron_ore_cfr_china_usd_per_dmt": "iron ore, cfr spot",
    "coal_australia_usd_per_mt": "coal, australian",
    "coal_south_africa_usd_per_mt": "coal, south african",
    "crude_oil_brent_usd_per_bbl": "crude oil, brent",
    "crude_oil_wti_usd_per_bbl": "crude oil, wti",
    "crude_oil_avg_usd_per_bbl": "crude oil, average",
    "natural_gas_europe_usd_per_mmbtu": "natural gas, europe",
    "copper_usd_per_mt": "copper",
    "aluminum_usd_per_mt": "aluminum",
    "nickel_usd_per_mt": "nickel",
    "zinc_usd_per_mt": "zinc",
}
INDEX_COLUMNS: dict[str, str] = {
    "total_index": "total index",
    "energy_index": "energy",
    "non_energy_index": "non-energy",
    "metals_minerals_index": "metals & minerals",
    "base_metals_ex_iron_ore_index": "base metals",
    "precious_metals_index": "precious metals",
}
# The iron ore column's basis and unit by period (the workbook's own description).
IRON_ORE_BASIS: tuple[tuple[str, str, str], ...] = (
    ("1960-01-01", "US cents per dmtu (1% Fe unit per dry metric tonne)",
     "annual contract, Brazil (Vale Itabira) f.o.b. Tubarao, for Europe"),
    ("1987-01-01", "US cents per dmtu (1% Fe unit per dry metric tonne)",
     "annual contract, Brazil (Vale Carajas sinter feed) f.o.b. Ponta da Madeira"),
    ("2006-01-01", "USD per dry metric tonne", "spot, fines 63.5% Fe, c.f.r. China"),
    ("2008-12-01", "USD per dry metric tonne", "spot, fines 62% Fe, c.f.r. China"),
)
IRON_ORE_SPOT_FROM = "2006-01-01"


def _norm(text: object) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def _sheet(workbook: bytes, name: str, wanted: dict[str, str]) -> pd.DataFrame:
    """Columns `date` + `wanted` keys from one sheet, one row per month, values as floats."""
    try:
        raw = pd.read_excel(io.BytesIO(workbook), sheet_name=name, header=None, engine="openpyxl")
    except ValueError as exc:  # no such sheet, or not an xlsx
        raise DataError(f"Pink Sheet: cannot read sheet {name!r}: {str(exc).splitlines()[0]}") from None
    except Exception as exc:  # noqa: BLE001 - openpyxl raises zipfile/KeyError/… on a bad file
        raise DataError(f"Pink Sheet: not a readable xlsx file ({type(exc).__name__})") from None
    first = raw.iloc[:, 0].map(lambda v: bool(_MONTH.match(str(v))))
    if not first.any():
        raise DataError(f"Pink Sheet: sheet {name!r} has no rows dated like 1960M01")
    start = int(first.to_numpy().nonzero()[0][0])
    header_rows = raw.iloc[:start]
    found: dict[str, int] = {}
    for key, label in wanted.items():
        for col in range(1, raw.shape[1]):
            names = [_norm(v) for v in header_rows.iloc[:, col] if pd.notna(v)]
            if any(n.startswith(label) for n in names):
                found[key] = col
                break
        else:
            raise DataError(f"Pink Sheet: sheet {name!r} has no column {label!r}")
    rows = raw.iloc[start:]
    rows = rows[rows.iloc[:, 0].map(lambda v: bool(_MONTH.match(str(v))))]
    dates = [f"{m.group(1)}-{m.group(2)}-01" for m in (_MONTH.match(str(v)) for v in rows.iloc[:, 0])]
    out = pd.DataFrame({"date": dates})
    for key, col in found.items():
        # ".." and "…" mark missing months in the workbook.
        out[key] = pd.to_numeric(rows.iloc[:, col].reset_index(drop=True), errors="coerce").round(4)
    return out


def parse(workbook: bytes) -> dict[str, pd.DataFrame]:
    """The three bundled World Bank tables from the workbook's bytes."""
    prices = _sheet(workbook, PRICES_SHEET, PRICE_COLUMNS)
    indices = _sheet(workbook, INDICES_SHEET, INDEX_COLUMNS)
    iron = pd.DataFrame({"date": prices["date"], "iron_ore_price": prices["iron_ore_cfr_china_usd_per_dmt"]})
    when = pd.to_datetime(iron["date"])
    iron["unit"], iron["basis"] = "", ""
    for since, unit, basis in IRON_ORE_BASIS:
        iron.loc[when >= pd.Timestamp(since), ["unit", "basis"]] = [unit, basis]
    # The commodities file keeps only the US$/dmt spot era of iron ore (see data/README.md).
    prices.loc[pd.to_datetime(prices["date"]) < pd.Timestamp(IRON_ORE_SPOT_FROM),
               "iron_ore_cfr_china_usd_per_dmt"] = float("nan")
    return {
        "worldbank_commodities_monthly.csv": prices,
        "worldbank_price_indices_monthly.csv": indices,
        "iron_ore_monthly_worldbank.csv": iron.dropna(subset=["iron_ore_price"]),
    }
