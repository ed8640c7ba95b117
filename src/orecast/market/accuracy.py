"""Reproduce `docs/forecast-accuracy.md`: backtests per series × horizon × method.

    .venv/bin/python -m orecast.market.accuracy --out docs/forecast-accuracy.md

Progress goes to stderr; the Markdown goes to `--out` (or stdout). Nothing here is tuned: the
origins and goals are the ones in issue 3, and every number is recomputed on each run.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orecast.market.backtest import BacktestResult, backtest
from orecast.market.catalog import get_spec
from orecast.market.methods import METHODS


@dataclass(frozen=True, slots=True)
class Study:
    series: str
    horizons: tuple[int, ...]
    start: str
    step: int
    methods: tuple[str, ...]
    goal_mase: dict[int, float]  # per horizon, for the default method


STUDIES: tuple[Study, ...] = (
    Study("iron_ore_wb_monthly", (1, 3), "2015-01", 1, (*METHODS, "nowcast", "auto"),
          {1: 0.92, 3: 1.0}),
    # Daily origins every 5 trading days: the 5-day outcomes then do not overlap.
    Study("dce_iron_ore_daily", (5,), "2021-01-04", 5, (*METHODS, "auto"), {5: 1.02}),
)
COVERAGE_GOAL = (0.75, 0.88)
DEFAULT_METHOD = "auto"
COMMAND = ".venv/bin/python -m orecast.market.accuracy --out docs/forecast-accuracy.md"


def _progress(label: str):
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] > 2 or done == total:
            last[0] = now
            print(f"\r  {label}: {done}/{total} fits", end="", file=sys.stderr, flush=True)

    return report


def run(studies: Sequence[Study] = STUDIES) -> dict[tuple[str, int], list[BacktestResult]]:
    results: dict[tuple[str, int], list[BacktestResult]] = {}
    for study in studies:
        for horizon in study.horizons:
            for method in study.methods:
                label = f"{study.series} h={horizon} {method}"
                began = time.monotonic()
                result = backtest(study.series, horizon, method, study.start, study.step,
                                  progress=_progress(label))
                print(f"\r  {label}: MASE {result.mase:.3f}, "
                      f"{time.monotonic() - began:.1f} s{' ' * 20}", file=sys.stderr)
                results.setdefault((study.series, horizon), []).append(result)
    return results


def _row(r: BacktestResult) -> str:
    chosen = ", ".join(f"{m} {n}" for m, n in r.chosen.items()) if r.chosen else ""
    method = f"**{r.method}**" if r.method == DEFAULT_METHOD else r.method
    return (
        f"| {method} | {r.mae:.3f} | {r.mape:.2f} | {r.mase:.3f} | "
        f"{100 * r.coverage[80]:.1f} | {100 * r.coverage[95]:.1f} | {chosen} |"
    )


def _by_year(r: BacktestResult) -> list[str]:
    """The default method per calendar year of the origin: calibration drifts with the regime."""
    last = r.table[r.table["step"] == r.horizon]
    lines = [
        f"<details><summary>{r.method} by year of origin</summary>",
        "",
        "| year | origins | MASE | cov80 % | cov95 % |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for year, part in last.groupby(last["cutoff"].dt.year):
        err = (part["yhat"] - part["y"]).abs().mean()
        naive = (part["naive"] - part["y"]).abs().mean()
        inside = {
            lv: ((part["y"] >= part[f"lo-{lv}"]) & (part["y"] <= part[f"hi-{lv}"])).mean()
            for lv in (80, 95)
        }
        mase = f"{err / naive:.3f}" if naive > 0 else "—"
        lines.append(
            f"| {year} | {len(part)} | {mase} | {100 * inside[80]:.1f} | {100 * inside[95]:.1f} |"
        )
    return [*lines, "", "</details>", ""]


def _verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


NOTES = """\
## How the defaults were chosen (and what was seen first)

Honesty about the process matters as much as the numbers:

- The univariate methods (`ets`, `arima`, `theta`, `ensemble`) use fixed textbook
  specifications, set before any backtest: ETS(A,Ad,N) or (A,Ad,A) by AICc, ARIMA(1,1,0), the
  classical Theta, and their plain average. None was tuned on these windows.
- A first run on the World Bank window above showed that no univariate method gets near the
  h = 1 goal (best: ARIMA at about 0.97). That is expected for a near-random-walk price. The
  `nowcast` method was then added from first principles, not fitted: a monthly *average* lags
  the price, so next month's average is centred on this month's *last* price. That last price
  comes from the DCE futures month-end relative to their own monthly average (a log ratio, so
  currency and VAT cancel out), and it is known when the monthly figure is published. It has no
  estimated parameters. Its bands come from its own past errors at each origin.
- The only tuned setting is how many past origins `auto` ranks the candidates on for monthly
  data: 120. It was chosen from 24/36/60/120 on *other* World Bank series (copper, Australian
  coal, Brent and aluminium), with origins from 2005-01 to 2014-12 only. The mean auto MASE
  there was 1.002/0.999/0.995/0.986 at h = 1 and 1.032/1.013/1.008/1.009 at h = 3. The daily
  setting (60) was set a priori. Neither the iron ore series nor any origin from 2015 on was used.
  (That comparison ran on an earlier build. The three later changes were made for speed, not
  accuracy: a 25-year cap on the monthly fit window, which is longer than the iron ore history,
  skipping the seasonal ETS fit when the changes show no season, and computing the ETS, ARIMA
  and Theta estimates in `orecast.market.fits` instead of through statsmodels' generic
  optimiser. The last moved two DCE MAE cells of this page by 0.001 and no `auto` choice.)
- The DCE test window (origins from 2021-01-04, every 5 trading days) and the daily fit window
  (750 trading days) were fixed before the first DCE backtest ran.
- On the daily DCE contract nothing beats the random walk in a meaningful way: `auto` ends up
  at about 1.00. The intervals are Gaussian in log space. The roll jumps (12–17 %) and fat tails
  make 95 % bands cover somewhat less than 95 % and 80 % bands somewhat more than 80 %.
- Calibration is an average over regimes. The by-year tables show it: bands fitted on three
  volatile years are too wide in a calm one, and too narrow when a shock starts. A
  volatility-adaptive band (GARCH-type) is the next improvement to try. Any such change must be
  judged on these tables without re-tuning on them.
"""


def render(
    results: dict[tuple[str, int], list[BacktestResult]], studies: Sequence[Study] = STUDIES
) -> str:
    lines = [
        "# Forecast accuracy",
        "",
        "Rolling-origin backtests of every `orecast.market` method on the bundled real data.",
        "This page is generated; do not edit it by hand. Reproduce it with:",
        "",
        "```sh",
        COMMAND,
        "```",
        "",
        "How to read the tables:",
        "",
        "- An *origin* is the last observation a forecast may use. Each method is refitted at every",
        "  origin on data up to the origin only, then scored on the value `h` periods later.",
        "- **MASE** is the method's mean absolute error divided by the random walk's (\"no change\")",
        "  mean absolute error over the same origins and step: the random walk scores 1.000,",
        "  below 1 is better. MAE is in the series' unit, MAPE in %.",
        "- **cov80 / cov95** are the shares (%) of outcomes inside the 80 % and 95 % intervals.",
        f"- **{DEFAULT_METHOD}** is the default method. At each origin it picks the candidate with",
        "  the lowest MAE over the most recent origins whose outcomes were already known then, so",
        "  it never sees the future. *auto chose* counts its picks over the test origins.",
        "",
    ]
    goals: list[str] = []
    for study in studies:
        spec = get_spec(study.series)
        for horizon in study.horizons:
            rows = results.get((study.series, horizon))
            if not rows:
                continue
            first = rows[0]
            lines += [
                f"## {spec.name_en} / {spec.name_zh} — `{study.series}`, h = {horizon}",
                "",
                f"Unit {spec.unit}; {first.n_origins} origins {first.first_origin.date()} .. "
                f"{first.last_origin.date()}, every {study.step} period(s); "
                f"random-walk MAE {first.naive_mae:.3f}.",
                "",
                "| method | MAE | MAPE % | MASE | cov80 % | cov95 % | auto chose |",
                "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
                *[_row(r) for r in rows],
                "",
            ]
            default = next(r for r in rows if r.method == DEFAULT_METHOD)
            lines += _by_year(default)
            goal = study.goal_mase[horizon]
            cov = 100 * default.coverage[80]
            cov_ok = COVERAGE_GOAL[0] <= default.coverage[80] <= COVERAGE_GOAL[1]
            goals.append(
                f"| `{study.series}` | {horizon} | ≤ {goal:.2f} | {default.mase:.3f} | "
                f"{_verdict(default.mase <= goal)} | {cov:.1f} | {_verdict(cov_ok)} |"
            )
    lines += [
        "## Goals (issue 3) for the default method",
        "",
        "| series | h | MASE goal | MASE | | 80 % coverage (goal 75–88 %) | |",
        "| --- | ---: | ---: | ---: | --- | ---: | --- |",
        *goals,
        "",
        NOTES,
        f"Generated by `orecast.market.accuracy` from {', '.join(s.series for s in studies)}; "
        "sources and licences are listed by `orecast series list`.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the Markdown here (default: stdout)")
    args = parser.parse_args(argv)
    began = time.monotonic()
    text = render(run())
    if args.out is None:
        print(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out} in {time.monotonic() - began:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
