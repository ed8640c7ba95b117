"""DCE/SHFE daily futures, USD/CNH and China's official PMI through akshare (optional extra
`orecast[live]`), turned into the bundled files' schemas.

The frame shapes are those of akshare 1.19 (read from its source): `futures_zh_daily_sina(symbol)`
gives date/open/high/low/close/volume/hold/settle for Sina's continuous contracts, the same series
the bundled files hold; `forex_hist_em("USDCNH")` gives 日期/代码/名称/今开/最新价/最高/最低/振幅;
`macro_china_pmi()` gives 月份 ("2026年07月份") and 制造业-指数. The converters are plain functions of
a frame, so they are tested offline on frames of exactly these shapes; the calls into akshare
themselves need the network and are not exercised by the tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd

from orecast.market.update.validate import DataError

FUTURES: dict[str, str] = {
    "dce_iron_ore_futures_daily.csv": "I0",
    "shfe_rebar_futures_daily.csv": "RB0",
    "shfe_hot_rolled_coil_futures_daily.csv": "HC0",
    "dce_coke_futures_daily.csv": "J0",
    "dce_coking_coal_futures_daily.csv": "JM0",
}
FX_FILE = "usd_cnh_daily.csv"
PMI_FILE = "china_nbs_manufacturing_pmi_monthly.csv"
FUTURES_LABEL = "{exchange} daily quotes, continuous (连续) main contract as served by Sina Finance, via akshare"
FX_LABEL = "USD/CNH daily close from Eastmoney, via akshare"
PMI_LABEL = "National Bureau of Statistics of China (NBS) manufacturing PMI, from Eastmoney via akshare"


def _need(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{what}: the frame has no column(s) {', '.join(missing)}; "
                        f"columns are {list(frame.columns)}")


def futures_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`futures_zh_daily_sina` output -> the bundled futures columns."""
    _need(frame, ["date", "open", "high", "low", "close", "volume", "hold", "settle"], "futures")
    dates = pd.to_datetime(frame["date"], errors="coerce")
    if dates.isna().any():
        raise DataError(f"futures: unreadable date {frame['date'][dates.isna()].iloc[0]!r}")
    out = pd.DataFrame({"date": dates.dt.strftime("%Y-%m-%d")})
    for src, dst in (("open", "open_cny_per_t"), ("high", "high_cny_per_t"), ("low", "low_cny_per_t"),
                     ("close", "close_cny_per_t"), ("settle", "settle_cny_per_t")):
        out[dst] = pd.to_numeric(frame[src], errors="coerce").astype(float)
    # Sina reports 0 for a settle it does not have yet; the bundled files leave such cells empty.
    out.loc[out["settle_cny_per_t"] <= 0, "settle_cny_per_t"] = float("nan")
    out["volume_lots"] = pd.to_numeric(frame["volume"], errors="coerce").astype("Int64")
    out["open_interest_lots"] = pd.to_numeric(frame["hold"], errors="coerce").astype("Int64")
    return out.reset_index(drop=True)


def fx_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`forex_hist_em("USDCNH")` output -> `date, usd_cnh` (the close, 最新价)."""
    _need(frame, ["日期", "最新价"], "USD/CNH")
    dates = pd.to_datetime(frame["日期"], errors="coerce")
    out = pd.DataFrame({"date": dates.dt.strftime("%Y-%m-%d"),
                        "usd_cnh": pd.to_numeric(frame["最新价"], errors="coerce")})
    return out[dates.notna().to_numpy()].reset_index(drop=True)


_MONTH = re.compile(r"(\d{4})\D+(\d{1,2})")


def pmi_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`macro_china_pmi()` output (newest first) -> `date, china_nbs_manufacturing_pmi`."""
    _need(frame, ["月份", "制造业-指数"], "PMI")
    dates = []
    for text in frame["月份"]:
        m = _MONTH.search(str(text))
        if m is None:
            raise DataError(f"PMI: unreadable month {text!r}")
        dates.append(f"{m.group(1)}-{int(m.group(2)):02d}-01")
    out = pd.DataFrame({"date": dates,
                        "china_nbs_manufacturing_pmi": pd.to_numeric(frame["制造业-指数"], errors="coerce")})
    return out.sort_values("date").reset_index(drop=True)


Fetch = Callable[[], pd.DataFrame]


def _akshare():  # noqa: ANN202 - the module, typed by akshare itself
    try:
        import akshare
    except ImportError:
        raise DataError("the futures, fx and pmi sources need akshare: pip install 'orecast[live]'") from None
    return akshare


def fetchers() -> dict[str, Fetch]:
    """Per bundled file, a call that downloads its raw frame through akshare (network)."""
    calls: dict[str, Fetch] = {
        file: (lambda symbol=symbol: _akshare().futures_zh_daily_sina(symbol=symbol))
        for file, symbol in FUTURES.items()
    }
    calls[FX_FILE] = lambda: _akshare().forex_hist_em(symbol="USDCNH")
    calls[PMI_FILE] = lambda: _akshare().macro_china_pmi()
    return calls
