"""CLI smoke tests for `orecast series …`, `orecast forecast` and `orecast backtest`."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orecast.cli.main import app
from tests.cli import inprocess

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_series_list_shows_the_catalogue():
    result = run("series", "list")
    assert result.exit_code == 0, result.output
    assert "iron_ore_wb_monthly" in result.stdout and "dce_iron_ore_daily" in result.stdout


def test_series_list_json_has_sources():
    result = run("series", "list", "--json")
    rows = json.loads(result.stdout)
    assert {row["id"] for row in rows} >= {"usd_cnh_daily", "china_pmi_monthly"}
    assert all(row["source"] and row["licence"] for row in rows)


def test_series_show_describes_and_lists_recent_values():
    result = run("series", "show", "iron_ore_wb_monthly", "--start", "2024-01", "--tail", "2")
    assert result.exit_code == 0, result.output
    assert "max drawdown" in result.stdout and "2026-05-01" in result.stdout


def test_series_show_json_resamples():
    result = run("series", "show", "dce_iron_ore_daily", "--freq", "M", "--json", "--tail", "3")
    data = json.loads(result.stdout)
    assert data["frequency"] == "monthly" and len(data["recent"]) == 3
    assert data["recent"][-1]["date"] == "2026-08-01"


def test_forecast_json_and_plot(tmp_path):
    png = tmp_path / "ore.png"
    result = run("forecast", "iron_ore_wb_monthly", "--horizon", "3", "--method", "nowcast",
                 "--json", "--plot", str(png))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["method"] == "nowcast" and len(data["forecast"]) == 3
    assert data["unit"] == "US$/dmt" and "World Bank" in data["source"]
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_forecast_table_with_custom_levels():
    result = run("forecast", "china_pmi_monthly", "-n", "2", "--method", "naive",
                 "--level", "50", "--level", "90")
    assert result.exit_code == 0, result.output
    assert "50% interval" in result.stdout and "90% interval" in result.stdout


def test_backtest_json():
    result = run("backtest", "iron_ore_wb_monthly", "--horizon", "1", "--method", "naive",
                 "--start", "2020-01", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mase"] == 1.0 and data["origins"]["first"] == "2020-01-01"


def test_backtest_table():
    result = run("backtest", "china_pmi_monthly", "--horizon", "1", "--method", "drift")
    assert result.exit_code == 0, result.output
    assert "MASE" in result.stdout and "coverage" in result.stdout


def test_forecast_of_a_user_csv(tmp_path):
    path = tmp_path / "mine.csv"
    rows = [f"{2000 + i}-01-01,{100 + 3 * i}" for i in range(30)]
    path.write_text("date,value\n" + "\n".join(rows) + "\n")
    result = run("forecast", str(path), "--horizon", "2", "--method", "drift", "--json")
    assert result.exit_code == 0, result.output
    # Positive values are modelled in logs: the drift is the average log change.
    expected = 187 * (187 / 100) ** (1 / 29)
    assert json.loads(result.stdout)["forecast"][0]["mean"] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("forecast", "iron_ore", "--horizon", "3"), "did you mean"),
        (("forecast", "iron_ore_wb_monthly", "--horizon", "0"), "horizon must be at least 1"),
        (("forecast", "iron_ore_wb_monthly", "-n", "2", "--method", "x"), "unknown method"),
        (("backtest", "iron_ore_wb_monthly", "-n", "1", "--start", "2020", "--end", "2019"),
         "no forecast origin"),
        (("series", "show", "iron_ore_wb_monthly", "--start", "2025", "--end", "2024"),
         "after end"),
        (("series", "show", "nope.csv"), "not found"),
    ],
)
def test_bad_input_is_one_clear_line_with_exit_code_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("backtest", "iron_ore_wb_monthly", "-n", "1", "--method", "naive", "--start", "garbage"),
         "start 'garbage' is not a date"),
        (("backtest", "iron_ore_wb_monthly", "-n", "1", "--method", "naive", "--end", "2024-13"),
         "end '2024-13' is not a date"),
        (("series", "show", "[/oops]"), "CSV file not found: [/oops]"),
        (("forecast", "iron_ore_wb_monthly", "-n", "1", "--method", "[/m]"), "unknown method '[/m]'"),
        (("series", "show", "\x1b[2J"), "unknown series id '\\x1b[2J'"),
    ],
)
def test_what_the_user_typed_is_quoted_in_one_line(args, message):
    """Dates pandas cannot read and ids with markup were tracebacks; an escape reached the terminal."""
    result = inprocess.orecast(list(args))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"Error: {message}")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and "\x1b" not in result.stderr


def test_plot_is_a_png_at_exactly_the_path_given(tmp_path):
    for name in ("fan.txt", "fan"):  # `.txt` was a traceback; no suffix wrote `fan.png` instead
        result = inprocess.orecast(["forecast", "iron_ore_wb_monthly", "-n", "2", "--method", "naive",
                                    "--plot", str(tmp_path / name)])
        assert result.returncode == 0, result.stderr
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
        assert f"Chart written to {tmp_path / name}" in " ".join(result.stdout.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fan", "fan.txt"]


def test_plot_that_cannot_be_written_is_one_line(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    for target in (tmp_path, tmp_path / "file" / "fan.png"):
        result = inprocess.orecast(["forecast", "iron_ore_wb_monthly", "-n", "2", "--method", "naive",
                                    "--plot", str(target)])
        assert result.returncode == 1
        assert result.stderr.startswith(f"Error: cannot write {target}: ")
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_plot_that_fails_midway_leaves_no_file_and_keeps_the_old_chart(tmp_path):
    """A full disk (here: a file-size limit of 10 kB, below a chart's size) once left a truncated PNG."""
    target = tmp_path / "fan.png"
    target.write_bytes(b"the chart of yesterday")

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))

    result = subprocess.run(
        [sys.executable, "-m", "orecast.cli.main", "forecast", "iron_ore_wb_monthly", "-n", "2",
         "--method", "naive", "--plot", str(target)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, preexec_fn=small_files,
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"Error: cannot write {target}: File too large"), result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["fan.png"]
    assert target.read_bytes() == b"the chart of yesterday"


def test_relate_with_a_max_lag_beyond_the_data_is_a_usage_error():
    result = inprocess.orecast(["series", "relate", "iron_ore_wb_monthly", "shfe_rebar_daily",
                                "--start", "2025-01", "--max-lag", "15"])
    assert result.returncode == 2, result.stderr
    # 17 monthly returns: January 2025's counts from December 2024 (a period's first return does)
    assert result.stderr.startswith("Error: max_lag 15 is too long: iron_ore_wb_monthly and "
                                    "shfe_rebar_daily share 17 returns in range")
    assert "use at most 14" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def fitting(pid: int, seconds: float = 120) -> None:
    """Wait until process `pid` has loaded the model fits' scipy (the backtest imports them before its
    first fit, inside the command)."""
    deadline = time.monotonic() + seconds
    while "/scipy/optimize/" not in Path(f"/proc/{pid}/maps").read_text():
        assert time.monotonic() < deadline, "the backtest did not start fitting"
        time.sleep(0.05)


@pytest.mark.slow
def test_ctrl_c_mid_backtest_says_how_far_it_got(tmp_path):
    """It exited 130 without a word. This backtest fits for ~45 s: Ctrl-C comes a second after its
    fits begin."""
    process = subprocess.Popen(
        [sys.executable, "-m", "orecast.cli.main", "backtest", "dce_iron_ore_daily", "--horizon", "5",
         "--start", "2015-01", "--method", "auto"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "XDG_CACHE_HOME": str(tmp_path)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # Once the command runs, not at a fixed time: a Ctrl-C while Python still imports the CLI (4 s
    # were not enough beside the other tests on 2 cores) is a traceback, not this command's line.
    fitting(process.pid)
    time.sleep(1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    # 130, or (once in a loaded run, cause not found) death by SIGINT after the line: a shell's $? is
    # 130 for both
    assert process.returncode in (130, -signal.SIGINT), err
    assert re.fullmatch(r"interrupted (after \d+ of \d+ fits|before the first fit); run the same command again\n", err), err
    assert out == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # NaN printed "series 'mill_margin' has fewer than 3 numeric values"; inf a margin of -inf
        (["series", "margin", "--iron-ore-coef", "nan"], "Error: iron_ore_coef and coke_coef must be finite"),
        (["series", "margin", "--coke-coef", "inf"], "Error: iron_ore_coef and coke_coef must be finite"),
        # -1 printed every value but the first
        (["series", "show", "iron_ore_wb_monthly", "--tail", "-1"], "error: Invalid value for '--tail'"),
    ],
)
def test_numbers_out_of_range_are_one_line(args, message):
    result = inprocess.orecast(args)
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith(message) and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stdout == ""


def test_csv_without_date_column_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("price\n1\n2\n3\n")
    result = run("forecast", str(path), "--horizon", "1")
    assert result.exit_code == 2
    assert "no date column" in result.stderr and "Traceback" not in result.output


def test_every_market_command_has_help_with_an_example():
    for args in (("series", "list"), ("series", "show"), ("series", "relate"),
                 ("series", "margin"), ("forecast",), ("backtest",)):
        result = run(*args, "--help")
        assert result.exit_code == 0 and "Example:" in result.stdout


def _no_csv_files(tmp_path):
    """Paths that exist but are no CSV file to read: (path, what the one line says)."""
    fifo = tmp_path / "prices.csv"
    os.mkfifo(fifo)  # opened, it would block until a writer came
    binary = tmp_path / "prices.xlsx"
    binary.write_bytes(b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)) * 4)
    huge = tmp_path / "huge.csv"
    with huge.open("wb") as file:
        file.truncate(40 * 2**20)  # sparse: 40 MiB of NUL bytes that take no disk
    cases = [
        ("/dev/zero", "Error: /dev/zero is a device, not a CSV file"),  # endless
        (f"{tmp_path}/", f"Error: {tmp_path} is a folder, not a CSV file"),
        (str(fifo), f"Error: {fifo} is a pipe, not a CSV file"),
        (str(binary), f"Error: cannot read {binary}: it holds binary data, not CSV text"),
        (str(huge), f"Error: {huge} is larger than 32 MiB: too large for a CSV of one series"),
    ]
    if os.path.exists("/proc/self/mem"):  # a regular file whose read fails (EIO), even for root
        cases.append(("/proc/self/mem", "Error: cannot read /proc/self/mem: Input/output error"))
    return cases


def test_a_path_that_is_no_csv_file_is_said_for_what_it_is(tmp_path):
    """/dev/zero, a folder and a FIFO were "CSV file not found"; a binary file quoted a decoder's error
    and a large one went to pandas whole."""
    for path, line in _no_csv_files(tmp_path):
        result = inprocess.orecast(["series", "show", path])
        assert result.returncode == 2, (path, result.stderr)
        assert result.stderr == line + "\n", (path, result.stderr)


def test_a_chinese_excel_csv_in_gbk_with_a_date_column_named_in_chinese(tmp_path):
    """Excel on a Chinese Windows saves CSV as GBK: it was "'utf-8' codec can't decode byte", and a
    date column headed 日期 was "no date column"."""
    path = tmp_path / "铁矿石价格.csv"
    rows = "".join(f"2024-{month:02d}-01,{100 + month}\n" for month in range(1, 13))
    path.write_bytes(("日期,价格（元/吨）\n" + rows).encode("gbk"))
    result = inprocess.orecast(["series", "show", str(path), "--json"])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["last"]["value"] == 112.0 and data["frequency"] == "monthly"
