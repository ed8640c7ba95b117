"""A month or a day named without a year ("9月份", "3月18日", "in September", "on March 18") is the
latest such one up to today (the next one when the question asks ahead), and a day of iron ore is the
daily futures' settle, as for "上周五". They were read as no date at all (the latest price answered)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import orecast.market as market_pkg
from orecast.agent.offline.intents import parse
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number

TODAY = date(2026, 12, 7)
DATA = Path(market_pkg.__file__).parent / "data"


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", TODAY.isoformat())


@pytest.mark.parametrize(("text", "start"), [
    ("世界银行铁矿石价格9月份是多少", "2026-09"),
    ("铁矿石九月份价格", "2026-09"),
    ("铁矿石12月价格", "2026-12"),  # this month is the latest such month
    ("铁矿石3月18日价格", "2026-03-18"),
    ("铁矿石3月份会涨吗", "2027-03"),  # asked ahead: the next March
    ("What was the World Bank iron ore price in September?", "2026-09"),
    ("What was iron ore on March 18?", "2026-03-18"),
    ("iron ore on May 5, 2025", "2025-05-05"),
    ("iron ore on 5 May 2025", "2025-05-05"),
    # spans and horizons are not a month
    ("未来9个月铁矿石价格", None),
    ("1-9月铁矿石均价", None),
    ("3月以来铁矿石涨了多少", None),
    ("prices may 5 times", None),
    # a year named keeps its own reading
    ("去年9月铁矿石价格", "2025-09"),
    ("2024年9月铁矿石价格", "2024-09"),
])
def test_a_month_or_day_without_a_year(text: str, start: str | None) -> None:
    q = parse(text)
    assert (q.start, q.end) == (start, start)


def _settle(day: str) -> float:
    frame = pd.read_csv(DATA / "dce_iron_ore_futures_daily.csv", index_col="date", parse_dates=True)
    return float(frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"])[pd.Timestamp(day)])


@pytest.mark.parametrize(("question", "day"), [
    ("3月18日铁矿石价格", "2026-03-18"),
    ("2026年3月18日铁矿石价格", "2026-03-18"),
    ("What was iron ore on May 8, 2025?", "2025-05-08"),
])
async def test_iron_ores_price_on_a_day_is_the_futures_settle(
    agent: Any, thread_id: str, question: str, day: str
) -> None:
    # Was: the latest prices (no date read), or the World Bank's monthly average for that month.
    turn = await run_turn(agent, thread_id, question)
    assert turn.call("price_history").args == {"series": "dce_iron_ore_daily", "start": day, "end": day}
    assert day in turn.text
    assert_number(turn.text, _settle(day))


async def test_a_month_after_the_data_gets_the_nearest_earlier_month(agent: Any, thread_id: str) -> None:
    # Was: the World Bank's May price with September not mentioned.
    turn = await run_turn(agent, thread_id, "世界银行铁矿石价格9月份是多少")
    assert turn.call("price_history").args == {"series": "iron_ore_wb_monthly", "start": "2026-05", "end": "2026-05"}
    assert "2026-09" in turn.text and "不是你问的那个月" in turn.text


@pytest.mark.parametrize(("text", "days"), [
    ("8月底铁矿石价格", ("2026-08-21", "2026-08-31")),
    ("3月初螺纹钢价格", ("2026-03-01", "2026-03-10")),
    ("2月底铁矿石", ("2026-02-21", "2026-02-28")),
    ("2025年10月中旬铁矿石价格", ("2025-10-11", "2025-10-20")),
    ("去年12月底铁矿石价格", ("2025-12-21", "2025-12-31")),
])
def test_a_part_of_a_month_is_its_days(text: str, days: tuple[str, str]) -> None:
    # Was: no date ("8月底" a horizon of 8 months, answered with the latest price).
    q = parse(text)
    assert (q.start, q.end) == days and q.horizon is None


async def test_iron_ore_at_the_end_of_a_month_is_the_futures_those_days(agent: Any, thread_id: str) -> None:
    frame = pd.read_csv(DATA / "dce_iron_ore_futures_daily.csv", index_col="date", parse_dates=True)
    settles = frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()["2025-12-21":"2025-12-31"]
    turn = await run_turn(agent, thread_id, "去年12月底铁矿石价格")
    assert turn.call("price_history").args == {"series": "dce_iron_ore_daily", "start": "2025-12-21",
                                               "end": "2025-12-31"}
    assert_number(turn.text, float(settles.mean()))
    assert_number(turn.text, float(settles.iloc[-1]))
