"""`orecast data update` offline: a local HTTP server serves a Pink Sheet workbook built here in the
real file's layout (from the bundled data, extended by two months); akshare-shaped frames stand in
for the akshare calls, which need the internet (their converters and the validation are what runs).
"""

from __future__ import annotations

import http.server
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import Workbook

from orecast.market import forecast, load_series
from orecast.market.loaders import forget_loaded
from orecast.market.update import data_status, update_data
from orecast.market.update.store import bundled_path
from orecast.market.update.worldbank import INDEX_COLUMNS, PRICE_COLUMNS

NEW_MONTHS = ["2026-06-01", "2026-07-01"]


def _bundled(file: str) -> pd.DataFrame:
    return pd.read_csv(bundled_path(file))


def _sheet(book: Workbook, title: str, frame: pd.DataFrame, names: dict[str, str]) -> None:
    ws = book.create_sheet(title)
    # The real workbook: four title rows, a row of names, a row of units, then `1960M01` rows.
    ws.append(["World Bank Commodity Price Data (The Pink Sheet)"])
    ws.append([f"{title} in nominal US dollars, 1960 to present"])
    ws.append(["(monthly series are available only in nominal US dollar terms)"])
    ws.append(["Updated on August 04, 2026"])
    ws.append([None, "Decoy, first column"] + [names[c].title() + " **" for c in frame.columns[1:]])
    ws.append([None, "($/x)"] + ["($/unit)"] * (len(frame.columns) - 1))
    for _, row in frame.iterrows():
        d = pd.Timestamp(row.iloc[0])
        ws.append([f"{d.year}M{d.month:02d}", 1.0]
                  + [("…" if pd.isna(v) else float(v)) for v in row.iloc[1:]])


def pink_sheet(scale: float = 1.0, drop_month: str | None = None) -> bytes:
    """The workbook: bundled history plus NEW_MONTHS (last value +1 %, +2 %), prices × `scale`."""
    frames = {}
    for file in ("worldbank_commodities_monthly.csv", "worldbank_price_indices_monthly.csv"):
        frame = _bundled(file)
        last = frame.iloc[-1]
        extra = [[m, *(last.iloc[1:] * (1 + 0.01 * (i + 1)))] for i, m in enumerate(NEW_MONTHS)]
        frame = pd.concat([frame, pd.DataFrame(extra, columns=frame.columns)], ignore_index=True)
        if drop_month:
            frame = frame[frame["date"] != drop_month]
        frames[file] = frame
    prices = frames["worldbank_commodities_monthly.csv"].copy()
    # The workbook's iron ore column covers 1960 on (cents per dmtu before 2006).
    iron = _bundled("iron_ore_monthly_worldbank.csv").set_index("date")["iron_ore_price"]
    prices["iron_ore_cfr_china_usd_per_dmt"] = prices["date"].map(iron).fillna(
        prices["iron_ore_cfr_china_usd_per_dmt"])
    indices = frames["worldbank_price_indices_monthly.csv"].copy()
    for frame in (prices, indices):
        frame.iloc[:, 1:] = frame.iloc[:, 1:] * scale
    book = Workbook()
    book.remove(book.active)
    _sheet(book, "Monthly Prices", prices, PRICE_COLUMNS)
    _sheet(book, "Monthly Indices", indices, INDEX_COLUMNS)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


class _Files(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, dict[str, bytes]]]:
    files: dict[str, bytes] = {}
    handler = type("Handler", (_Files,), {"files": files})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)  # a free port
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", files
    finally:
        httpd.shutdown()


@pytest.fixture
def user_market(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "market"
    monkeypatch.setenv("ORECAST_MARKET_DIR", str(folder))
    forget_loaded()
    yield folder
    monkeypatch.delenv("ORECAST_MARKET_DIR")
    forget_loaded()  # later tests see the bundled data again


def test_worldbank_update_is_used_everywhere(server, user_market, monkeypatch) -> None:
    base, files = server
    files["/cmo.xlsx"] = pink_sheet()
    monkeypatch.setenv("ORECAST_WB_PINK_SHEET_URL", f"{base}/cmo.xlsx")
    before = load_series("iron_ore_wb_monthly")
    assert before.index[-1] == pd.Timestamp("2026-05-01")

    results = update_data(["worldbank"])
    assert [r.ok for r in results] == [True, True, True], [r.message for r in results]
    assert {r.last for r in results} == {"2026-07-01"}

    after = load_series("iron_ore_wb_monthly")
    assert after.index[-1] == pd.Timestamp("2026-07-01")
    assert after.iloc[-1] == pytest.approx(before.iloc[-1] * 1.02, rel=1e-4)
    pd.testing.assert_series_equal(after.loc[:"2026-05-01"], before, check_exact=False)
    assert load_series("copper_wb_monthly").index[-1] == pd.Timestamp("2026-07-01")
    assert load_series("metals_index_wb_monthly").index[-1] == pd.Timestamp("2026-07-01")
    # The unit and basis columns are rebuilt for the whole history.
    iron = pd.read_csv(user_market / "iron_ore_monthly_worldbank.csv")
    assert iron.set_index("date").loc["1970-01-01", "unit"].startswith("US cents")
    assert iron.set_index("date").loc["2026-07-01", "basis"] == "spot, fines 62% Fe, c.f.r. China"

    fc = forecast("iron_ore_wb_monthly", 2, "naive")
    assert fc.last_date == pd.Timestamp("2026-07-01")
    assert "downloaded" in fc.source
    status = {s.id: s for s in data_status()}
    assert status["iron_ore_wb_monthly"].origin == "downloaded"
    assert status["iron_ore_wb_monthly"].last_date == "2026-07-01"
    assert status["dce_iron_ore_daily"].origin == "bundled"


@pytest.mark.parametrize(
    ("workbook", "why"),
    [
        (lambda: pink_sheet(scale=100.0), "wrong unit"),
        (lambda: pink_sheet(drop_month="2026-06-01"), "gap after 2026-05-01"),
        (lambda: b"<html>not a workbook</html>", "not a readable xlsx"),
    ],
)
def test_a_bad_download_changes_nothing(server, user_market, monkeypatch, workbook, why) -> None:
    base, files = server
    files["/bad.xlsx"] = workbook()
    monkeypatch.setenv("ORECAST_WB_PINK_SHEET_URL", f"{base}/bad.xlsx")
    results = update_data(["worldbank"])
    assert not any(r.ok for r in results)
    assert any(why in r.message for r in results), [r.message for r in results]
    assert load_series("iron_ore_wb_monthly").index[-1] == pd.Timestamp("2026-05-01")
    assert all(s.origin == "bundled" for s in data_status())


def test_a_tampered_download_falls_back_to_the_bundled_file(server, user_market, monkeypatch) -> None:
    base, files = server
    files["/cmo.xlsx"] = pink_sheet()
    monkeypatch.setenv("ORECAST_WB_PINK_SHEET_URL", f"{base}/cmo.xlsx")
    assert all(r.ok for r in update_data(["worldbank"]))
    path = user_market / "iron_ore_monthly_worldbank.csv"
    path.write_text(path.read_text()[:2000])  # truncated behind the manifest's back
    forget_loaded()
    assert load_series("iron_ore_wb_monthly").index[-1] == pd.Timestamp("2026-05-01")


def _sina_frame(file: str, extra_days: int, jump: float = 1.0) -> pd.DataFrame:
    """`akshare.futures_zh_daily_sina` output: the bundled history plus `extra_days` new days."""
    frame = _bundled(file)
    out = pd.DataFrame({
        "date": frame["date"], "open": frame["open_cny_per_t"], "high": frame["high_cny_per_t"],
        "low": frame["low_cny_per_t"], "close": frame["close_cny_per_t"],
        "volume": frame["volume_lots"], "hold": frame["open_interest_lots"],
        "settle": frame["settle_cny_per_t"].fillna(0),  # Sina's 0 for a missing settle
    })
    days = pd.bdate_range("2026-08-24", periods=extra_days)
    last = out.iloc[-1]
    rows = [{**last.to_dict(), "date": d.strftime("%Y-%m-%d"),
             **{k: last[k] * (jump if i == extra_days - 1 else 1.0)
                for k in ("open", "high", "low", "close", "settle")}}
            for i, d in enumerate(days)]
    return pd.concat([out, pd.DataFrame(rows)], ignore_index=True)


def test_futures_frames_in_akshare_shape(user_market) -> None:
    raw = {f: (lambda f=f: _sina_frame(f, 5)) for f in (
        "dce_iron_ore_futures_daily.csv", "shfe_rebar_futures_daily.csv",
        "shfe_hot_rolled_coil_futures_daily.csv", "dce_coke_futures_daily.csv",
        "dce_coking_coal_futures_daily.csv")}
    results = update_data(["futures"], raw_frames=raw)
    assert all(r.ok for r in results), [r.message for r in results]
    ore = load_series("dce_iron_ore_daily")
    assert ore.index[-1] == pd.Timestamp("2026-08-28") and ore.iloc[-1] == 707.0
    # Settle 0 (missing) became an empty cell again, so the close fills it as in the bundled file.
    written = pd.read_csv(user_market / "shfe_rebar_futures_daily.csv")
    assert written["settle_cny_per_t"].isna().sum() == _bundled(
        "shfe_rebar_futures_daily.csv")["settle_cny_per_t"].isna().sum()


def test_futures_jump_and_wrong_shape_are_refused(user_market) -> None:
    file = "dce_iron_ore_futures_daily.csv"
    jumped = update_data(["futures"], raw_frames={file: lambda: _sina_frame(file, 3, jump=1.5)})
    ore = next(r for r in jumped if r.file == file)
    assert not ore.ok and "jumps from 707 to 1060.5" in ore.message
    renamed = update_data(["futures"], raw_frames={
        file: lambda: _sina_frame(file, 3).rename(columns={"hold": "oi"})})
    assert "no column(s) hold" in next(r for r in renamed if r.file == file).message
    assert load_series("dce_iron_ore_daily").index[-1] == pd.Timestamp("2026-08-21")


def test_pmi_and_fx_frames_in_akshare_shape(user_market) -> None:
    pmi = _bundled("china_nbs_manufacturing_pmi_monthly.csv")
    months = [f"{d[:4]}年{d[5:7]}月份" for d in pmi["date"]] + ["2026年08月份"]
    values = list(pmi["china_nbs_manufacturing_pmi"]) + [49.6]
    pmi_raw = pd.DataFrame({"月份": months[::-1], "制造业-指数": values[::-1],
                            "制造业-同比增长": 0.0, "非制造业-指数": 50.0, "非制造业-同比增长": 0.0})
    fx = _bundled("usd_cnh_daily.csv")
    fx_raw = pd.DataFrame({"日期": list(fx["date"]) + ["2026-05-12"], "代码": "USDCNH", "名称": "美元兑离岸人民币",
                           "今开": 0.0, "最新价": list(fx["usd_cnh"]) + [6.80], "最高": 0.0, "最低": 0.0, "振幅": 0.0})
    results = update_data(["pmi", "fx"], raw_frames={
        "china_nbs_manufacturing_pmi_monthly.csv": lambda: pmi_raw, "usd_cnh_daily.csv": lambda: fx_raw})
    assert all(r.ok for r in results), [r.message for r in results]
    assert load_series("china_pmi_monthly").iloc[-1] == 49.6
    assert load_series("usd_cnh_daily").index[-1] == pd.Timestamp("2026-05-12")


@pytest.mark.slow
def test_cli_update_and_status(server, tmp_path: Path) -> None:
    base, files = server
    files["/cli.xlsx"] = pink_sheet()
    env = {**os.environ, "ORECAST_MARKET_DIR": str(tmp_path / "m"),
           "ORECAST_WB_PINK_SHEET_URL": f"{base}/cli.xlsx", "COLUMNS": "200"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "orecast.cli.main", "data", *args], env=env,
                              capture_output=True, text=True, timeout=120)

    updated = run("update", "--source", "worldbank")
    assert updated.returncode == 0, updated.stderr
    assert "iron_ore_monthly_worldbank.csv: 2 new rows, last 2026-07-01" in updated.stdout
    status = json.loads(run("status", "--json").stdout)
    ore = next(s for s in status if s["id"] == "iron_ore_wb_monthly")
    assert ore["origin"] == "downloaded" and ore["last_date"] == "2026-07-01"
    files["/cli.xlsx"] = b"broken"
    failed = run("update", "--source", "worldbank")
    assert failed.returncode == 1 and "✗" in failed.stdout
    assert run("update", "--source", "moon").returncode == 2
