"""What the data can and cannot answer: missing topics, periods outside a series, relative dates.

The rule is the one an expert follows: when the data does not hold the answer, say so and say
what it does hold — never answer a different question with a number that merely looks related.
Calendar words ("去年", "last quarter", "YTD") are calendar periods counted from today's date
(`orecast.agent.clock.today`); the answer then says how far the series actually reaches.
"""

from __future__ import annotations

import re

import pandas as pd

from orecast import market
from orecast.agent.clock import today
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline.intents import Query
from orecast.market import trading_days
from orecast.market.catalog import find_spec

_TOPICS = {
    "port_inventory": ("港口铁矿石库存", "port iron ore inventories"),
    "shipments": ("澳大利亚/巴西铁矿石发运量", "Australian/Brazilian iron ore shipments"),
    "freight": ("海运运费（如 BDI、C3/C5 航线）", "ocean freight rates (BDI, C3/C5 routes)"),
    "imports": ("中国铁矿石进口量", "China's iron ore imports"),
    "mine_output": ("矿山铁矿石产量", "iron ore mine output"),
    "steel_output_recent": ("月度或 2018 年以后的粗钢产量", "monthly or post-2018 crude steel output"),
    "production_costs": ("生产成本（矿山或钢厂的成本）", "production costs (of miners or mills)"),
    "trading_volume": ("期货成交量和持仓量（数据文件里有这两列，但我的工具只读取结算价）",
                       "futures trading volume and open interest (the data files hold them, but my tools read "
                       "settlement prices only)"),
    "sgx_swaps": ("新加坡交易所（SGX）铁矿石掉期/期货价格（我只有大商所期货和世界银行 CFR 中国月均价）",
                  "SGX iron ore swap or futures prices (I have the DCE futures and the World Bank CFR China "
                  "monthly average only)"),
    "miners": ("矿山企业（淡水河谷、力拓、必和必拓、FMG 等）", "miners (Vale, Rio Tinto, BHP, Fortescue …)"),
    "lithium": ("锂价", "lithium prices"),
    "gold": ("黄金价格（只有世界银行贵金属指数）", "gold prices (only the World Bank precious metals index)"),
    "silver": ("白银价格", "silver prices"),
    "scrap": ("废钢价格", "scrap steel prices"),
    "manganese": ("锰矿价格", "manganese prices"),
    "cobalt": ("钴价", "cobalt prices"),
    "grains": ("农产品价格", "farm commodity prices"),
    "euro": ("欧元汇率（只有美元兑离岸人民币）", "euro exchange rates (only USD/CNH)"),
    "local_market": ("本地铁矿石价格（如印度国内矿价、中国国产矿或铁精粉）",
                     "local iron ore prices (e.g. India's domestic price, Chinese domestic ore or concentrate)"),
    "contract_rules": ("交易所规则（涨跌停板、保证金、合约单位、最小变动价位等；请以大商所、上期所公布的合约细则为准）",
                       "exchange rules (price limits, margins, contract size, tick size: see the DCE/SHFE contract specifications)"),
    "other_fx": ("美元兑人民币以外的汇率（澳元、日元、英镑等）", "exchange rates other than USD/CNH (AUD, JPY, GBP …)"),
    "technicals": ("技术指标（均线、RSI、MACD 等；我的工具只给价格、统计和预测，可以问“画出走势图”或“近三个月统计”）",
                   "technical indicators (moving averages, RSI, MACD …; my tools give prices, statistics and forecasts: "
                   "ask for a chart or the past 3 months' statistics)"),
    "risk_ratios": ("无风险利率（所以算不了夏普比率这类风险调整收益；可以问年化波动率和年化涨跌）",
                    "a risk-free rate, so no Sharpe-type ratios (ask for the annualised volatility and change)"),
    "dollar_index": ("美元指数（我只有美元兑离岸人民币）", "the dollar index (only USD/CNH is bundled)"),
    "port_spot": ("港口现货价格（如青岛港 PB 粉；我只有世界银行的 CFR 中国 62% 指数价格和大商所期货）",
                  "port spot prices of brands (e.g. PB fines at Qingdao; I have the World Bank 62% CFR China price and "
                  "the DCE futures only)"),
    "other_grades": ("62% 以外品位的铁矿石价格（如 65%、58%），所以也没有品位价差",
                     "iron ore prices of grades other than 62% Fe (65%, 58%), so no grade spreads either"),
    "stocks": ("个股和股票推荐（我只有商品价格和宏观数据，不提供投资建议）",
               "stocks and stock picks (I have commodity prices and macro data only, and give no investment advice)"),
    "off_earth": ("地球以外（火星、月球、小行星等）的价格", "prices off Earth (Mars, the Moon, asteroids …)"),
    "interest_rate": ("利率", "interest rates"),
    "property": ("房地产新开工", "property starts"),
    "policy": ("限产政策", "output-cut policies"),
    "unknown": ("这个驱动因素", "this driver"),
}

HAVE_ZH = ("我有的数据：世界银行铁矿石月度价格（美元/干吨）、大商所铁矿石/焦炭/焦煤期货与上期所螺纹钢/热卷期货日度"
           "价格（元/吨）、美元兑离岸人民币、中国制造业 PMI、世界银行煤炭/原油/铜等月度价格，以及 2000–2018 年的"
           "年度粗钢产量。可以用 `orecast series list` 查看全部序列。")
HAVE_EN = ("What I do have: World Bank monthly iron ore prices (US$/dmt), DCE iron ore, coke and coking "
           "coal and SHFE rebar and hot-rolled coil futures (daily, CNY/t), USD/CNH, China's "
           "manufacturing PMI, World Bank monthly coal, oil, copper and metals prices, and annual "
           "crude steel output for 2000–2018. `orecast series list` shows every series.")


# Why a topic is missing, where the reason is not just that no series was bundled.
_WHY_MISSING = {
    "local_market": ("我的铁矿石价格只有两个：世界银行的 CFR 中国进口价和大商所期货，它们不是别国或国产矿的本地价格。",
                     "My iron ore prices are two: the World Bank's CFR China import price and the DCE "
                     "futures, which are not another country's or domestic ore's local price."),
    "off_earth": ("那里没有铁矿石市场，我的价格数据都来自地球上的市场（中国的期货交易所、世界银行的 CFR 中国现货价），"
                  "不能代表别处的价格。",
                  "There is no iron ore market there: every price I have comes from markets on Earth "
                  "(Chinese futures exchanges, the World Bank's CFR China spot price) and says nothing "
                  "about a price elsewhere."),
}


def no_data(topics: list[str], zh: bool) -> str:
    names = [_TOPICS.get(t, _TOPICS["unknown"])[0 if zh else 1] for t in topics]
    why = "".join(_WHY_MISSING[t][0 if zh else 1] + ("" if zh else " ") for t in topics if t in _WHY_MISSING)
    if zh:
        return (f"我没有{'、'.join(names)}的数据，所以不能回答这个问题，也不会用别的数字代替。{why}\n"
                + HAVE_ZH)
    return (f"I do not have data on {', '.join(names)}, so I cannot answer this, and I will not "
            f"substitute another number. {why}".rstrip() + "\n" + HAVE_EN)


def unsupported_shock(topic: str, zh: bool) -> str:
    name = _TOPICS.get(topic, _TOPICS["unknown"])[0 if zh else 1]
    from orecast.market import DRIVERS

    drivers = "、".join(d.name_zh for d in DRIVERS.values()) if zh else ", ".join(
        d.name_en for d in DRIVERS.values())
    if zh:
        return (f"这个情景无法从数据估计：我没有{name}的历史数据，不能量化它对矿价的影响，也不会猜一个数字。\n"
                f"我能做情景分析的冲击：{drivers}（例如“如果粗钢产量下降5%，铁矿石会怎样？”）。")
    return (f"I cannot size this scenario: I have no history of {name}, so I cannot estimate its "
            f"effect on the ore price, and I will not guess a number.\nShocks I can size: {drivers} "
            "(e.g. 'If China's crude steel output falls 5%, what happens to iron ore?').")


def not_a_date(day: str, zh: bool) -> str:
    if not 1 <= int(day[5:7]) <= 12:  # "2026年13月": a year has twelve months
        if zh:
            return f"{day} 不是一个存在的日期（一年只有 12 个月），所以没有这个时间的价格。请换一个日期再问。"
        return f"{day} is not a date (a year has 12 months), so there is no price for it. Please ask with another date."
    if zh:
        return f"{day} 不是一个存在的日期（这个月没有这一天），所以没有这一天的价格。请换一个日期再问。"
    return f"{day} is not a date (that month has no such day), so there is no price for it. Please ask with another date."


def past_not_forecast(zh: bool) -> str:
    if zh:
        return "过去的时期不需要预测：下面是这段时间的实际数据（按这个序列的最后日期倒推）。"
    return "A past period needs no forecast: below is the actual data for it (counted back from the series' last date)."


def not_a_horizon(text: str, zh: bool) -> str:
    if zh:
        return f"预测期数必须是正整数，{text} 不行：预测只能向前，按整期计。请问“未来3个月”这样的期限。"
    return (f"A forecast horizon must be a positive whole number of periods, not {text}: forecasts only "
            "run forward, period by period. Ask e.g. 'the next 3 months'.")


METHODS = ("auto", "naive", "drift", "ets", "arima", "theta", "ensemble", "nowcast")


def not_a_method(word: str, zh: bool) -> str:
    names = "、".join(METHODS) if zh else ", ".join(METHODS)
    if zh:
        return f"我没有叫 {word} 的预测方法，所以没有用它预测。可用的方法：{names}（nowcast 只用于世界银行铁矿石）。"
    return (f"I have no forecasting method called {word}, so I made no forecast with it. The methods are "
            f"{names} (nowcast for the World Bank iron ore price only).")


def no_series(subject: str, zh: bool) -> str:
    """A price asked for a thing no bundled series measures: say so, never the ore price instead."""
    if zh:
        return f"我没有“{subject}”的数据，所以不能给出它的价格，也不会用别的数字代替。\n" + HAVE_ZH
    return (f"I do not have data on \"{subject}\", so I cannot give its price, and I will not "
            "substitute another number.\n" + HAVE_EN)


def asks_own_record(text: str) -> bool:
    """"你去年的预测准不准", "how good were your forecasts": the analyst's own past forecasts."""
    return bool(re.search(r"你(?:的|去年的?|之前的?|以前的?|上次的?)预测|your (?:past |previous |last year's )?"
                          r"(?:forecasts?|predictions?)", text, re.I))


def nothing_to_check(series: str, start: str | None, zh: bool) -> str | None:
    """Accuracy asked for a period the data does not reach: no outcome, so no error to measure."""
    facts = cat.catalogue().get(series)
    if facts is None or not facts.end or not start or bound(start) <= pd.Timestamp(facts.end):
        return None
    nm = cat.name(series, zh)
    return (f"{start} 还没有{nm}的实际数据（数据只到 {facts.end}），所以对它的任何预测都还无法检验，我也不会给出一个误差。"
            "要看这个方法过去有多准，可以问例如“去年的预测准不准”或“铁矿石预测的准确度”。" if zh else
            f"There is no actual {nm} data for {start} yet (the data ends on {facts.end}), so no forecast "
            "for it can be checked, and I give no error for it. To see how accurate the method has been, "
            "ask e.g. 'how good were your forecasts last year?'.")


def own_record_note(zh: bool) -> str:
    if zh:
        return ("我不保存以前对话里给出的预测，所以没有“我当时说了什么”的记录。下面是回测：在每个起点只用当时已有的数据"
                "重新做一次同样的预测，再和后来的实际值比较——这就是这个方法在那段时间会有的准确度。")
    return ("I keep no record of forecasts given in earlier conversations, so I cannot replay what I said "
            "then. Below is a backtest instead: at each origin the same forecast is made again from the "
            "data known at that time and compared with what happened, which is how accurate the method "
            "would have been over that period.")


def days_ago(n: int, unit: str) -> str:
    """"一年前", "3 weeks ago": the ISO date that long before today (a calendar day; the dated
    answer then says when it is a closed day or inside a month)."""
    return (pd.Timestamp(today()) - pd.DateOffset(**{f"{unit}s": n})).date().isoformat()


def calendar_period(unit: str, shift: int) -> tuple[str, str]:
    """("year", -1) → the whole of last calendar year, as ISO start and end dates."""
    now = pd.Timestamp(today())
    if unit == "year":
        start = pd.Timestamp(year=now.year + shift, month=1, day=1)
        end = start + pd.DateOffset(years=1) - pd.DateOffset(days=1)
    elif unit == "week":  # Monday to Sunday
        start = (now - pd.Timedelta(days=now.weekday())).normalize() + pd.DateOffset(weeks=shift)
        end = start + pd.DateOffset(days=6)
    elif unit == "quarter":
        q0 = pd.Timestamp(year=now.year, month=3 * ((now.month - 1) // 3) + 1, day=1)
        start = q0 + pd.DateOffset(months=3 * shift)
        end = start + pd.DateOffset(months=3) - pd.DateOffset(days=1)
    else:
        start = pd.Timestamp(year=now.year, month=now.month, day=1) + pd.DateOffset(months=shift)
        end = start + pd.DateOffset(months=1) - pd.DateOffset(days=1)
    end = min(end, now) if start <= now else end  # "明年" is all of next year
    return start.date().isoformat(), end.date().isoformat()


def bound(text: str, upper: bool = False) -> pd.Timestamp:
    ts = pd.Timestamp(text)
    if not upper:
        return ts
    if re.fullmatch(r"\d{4}", text):
        return ts + pd.DateOffset(years=1) - pd.DateOffset(days=1)
    if re.fullmatch(r"\d{4}-\d{2}", text):
        return ts + pd.DateOffset(months=1) - pd.DateOffset(days=1)
    return ts


def coverage_gap(series: str, start: str | None, end: str | None, zh: bool) -> str | None:
    """A sentence when [start, end] holds no data of `series` (else None: the tool can answer)."""
    facts = cat.catalogue().get(series)
    if facts is None or not facts.end:
        return None
    first, last = pd.Timestamp(facts.start), pd.Timestamp(facts.end)
    lo = bound(start, False) if start else first
    hi = bound(end, True) if end else last
    if lo <= last and hi >= first:
        return None
    period = start if start and start == end else f"{start or facts.start} – {end or facts.end}"
    nm = cat.name(series, zh)
    if zh:
        return (f"我没有{nm}在 {period} 的数据：这个序列只覆盖 {facts.start} 至 {facts.end}。"
                "下面是我有的最新数据，不能代替你问的时期。")
    return (f"I have no {nm} data for {period}: the series covers {facts.start} to {facts.end} "
            "only. Below is the latest value I have; it does not answer for the period you asked about.")


def partial_note(series: str, start: str | None, end: str | None, zh: bool) -> str | None:
    """A period the data covers only in part ("Q3 2026", "今年" on data ending in August): say the
    numbers stop where the data does, so a partial quarter is not read as the whole one."""
    facts = cat.catalogue().get(series)
    if facts is None or not facts.end or not end:
        return None
    last, hi = pd.Timestamp(facts.end), bound(end, True)
    # A monthly average dated the 1st covers its whole month ("2026年5月" on data to 2026-05-01), a
    # year's output dated 1 January its whole year ("2018年粗钢产量" on data to 2018-01-01).
    ends = {"monthly": pd.offsets.MonthEnd(0), "quarterly": pd.offsets.QuarterEnd(0), "annual": pd.offsets.YearEnd(0)}
    covered = last + ends[facts.frequency] if facts.frequency in ends else last
    if hi <= covered or (start and bound(start, False) > last):
        return None
    period = f"{bound(start).date() if start else facts.start} – {hi.date().isoformat()}"
    return (f"你问的时期是 {period}，但我的{cat.name(series, True)}数据只到 {facts.end}：下面的数字只覆盖到 "
            f"{facts.end}，不是整个时期。" if zh else
            f"You asked about {period}, but my {cat.name(series, False)} data ends on {facts.end}: the "
            "figures below stop there and do not cover the whole period.")


def futures_for_the_rest(start: str | None, end: str | None, zh: bool) -> str | None:
    """The DCE futures beside the World Bank's iron ore price for a period the latter covers in part,
    when the futures reach further into it; which is the ore price and which the futures, said."""
    wb, dce = cat.catalogue()["iron_ore_wb_monthly"], cat.catalogue()["dce_iron_ore_daily"]
    if not end or pd.Timestamp(dce.end) <= pd.Timestamp(wb.end) + pd.offsets.MonthEnd(0):
        return None
    last = min(bound(end, True), pd.Timestamp(dce.end)).date()
    first = bound(start).date() if start else dce.start
    if zh:
        return (f"所以下面也给出大商所铁矿石期货（日度，元/吨）在 {first} 至 {last} 的数据。两者不是同一个价格："
                f"“铁矿石价格”是世界银行的现货月均价（62% 粉矿，CFR 中国，美元/干吨，只到 {wb.end}）；"
                "大商所期货是国内交易所的连续主力合约结算价（元/吨，含税、湿吨），单位和口径不同，不能直接相比。")
    return (f"So the DCE iron ore futures (daily, CNY/t) are given too, from {first} to {last}. They are not the "
            f"same price: the iron ore price is the World Bank's monthly spot average (62% fines, CFR China, "
            f"US$/dmt, to {wb.end}); the futures are the continuous main contract's settle on the Dalian exchange "
            "(CNY/t, wet tonnes, with VAT), in another unit and basis, not directly comparable.")


def asks_benchmark(text: str) -> bool:
    """The World Bank monthly average was asked for by name."""
    return bool(re.search(r"world bank|世界银行|世行|monthly|月度|月均|62%|62品位|cfr|普氏|platts",
                          text, re.I))


def price_now_note(zh: bool) -> str:
    if zh:
        return ("“现在的价格”以最新的日度数据（大商所铁矿石期货，元/吨）为准；世界银行月度均价（美元/干吨）"
                "更新较慢，作为参考。")
    return ("'Price now' is the freshest daily series (DCE iron ore futures, CNY/t); the World Bank "
            "monthly average (US$/dmt) is updated later and given as context.")


_UNIT_ZH = {"day": "天", "week": "周", "month": "个月", "year": "年"}


def lookback_note(series: str, period: tuple[int, str], zh: bool) -> str:
    """'近三个月' counts back from the series' last date; say so, with the dates."""
    n, unit = period
    facts = cat.catalogue().get(series)
    start = cat.lookback_start(series, n, unit)
    if facts is None or start is None:
        return ""
    if zh:
        return f"“近{n}{_UNIT_ZH[unit]}”按这个序列的最后日期倒推：{start} 至 {facts.end}。"
    return f"'The past {n} {unit}(s)' counts back from the series' last date: {start} to {facts.end}."


# Furthest forecast the analyst offers for a date the user names, in periods of the series.
MAX_TARGET_PERIODS = {"daily": 756, "weekly": 156, "monthly": 36, "quarterly": 12, "annual": 5}


def future_target(start: str | None, end: str | None, tomorrow: bool) -> pd.Timestamp | None:
    """The last day of an asked period that has not begun yet ("2027年", "tomorrow"), else None."""
    now = pd.Timestamp(today())
    if tomorrow:
        return now + pd.DateOffset(days=1)
    if start and bound(start, False) > now:
        return bound(end or start, True)
    return None


def forecast_target(series: str, start: str | None, end: str | None) -> pd.Timestamp | None:
    """"Forecast … for 2026-12": the end of the period asked, when the data stops before it."""
    facts = cat.catalogue().get(series)
    if facts is None or not facts.end or not (start or end):
        return None
    last_day = bound(end or start, True)  # type: ignore[arg-type]
    return last_day if last_day > pd.Timestamp(facts.end) else None


def calendar_of(series: str) -> str:
    spec = find_spec(series)
    return spec.calendar if spec is not None else trading_days.WEEKDAYS


def periods_until(series: str, target: pd.Timestamp) -> int | None:
    """Forecast periods of `series` from its last date to `target` (its trading days for daily data)."""
    facts = cat.catalogue().get(series)
    if facts is None or not facts.end:
        return None
    last = pd.Timestamp(facts.end)
    if facts.frequency == "daily":
        n = len(trading_days.trading_days(last + pd.DateOffset(days=1), target, calendar_of(series)))
    elif facts.frequency == "weekly":
        n = (target - last).days // 7
    elif facts.frequency == "monthly":
        n = (target.year - last.year) * 12 + target.month - last.month
    elif facts.frequency == "quarterly":
        n = ((target.year - last.year) * 12 + target.month - last.month) // 3
    else:
        n = target.year - last.year
    return n if n > 0 else None


def period_start(series: str, day: pd.Timestamp) -> pd.Timestamp:
    """The first day of the period of `series` that holds `day` (its month for monthly data)."""
    facts = cat.catalogue().get(series)
    frequency = facts.frequency if facts else "monthly"
    if frequency == "monthly":
        return day.normalize().replace(day=1)
    if frequency == "quarterly":
        return pd.Timestamp(year=day.year, month=3 * ((day.month - 1) // 3) + 1, day=1)
    if frequency == "annual":
        return pd.Timestamp(year=day.year, month=1, day=1)
    return day.normalize()


def ahead(series: str, n: int | None = None, unit: str = "month") -> tuple[int, pd.Timestamp]:
    """'The next n units' asked today: (forecast horizon from the data's last date, first day asked).

    The forecast starts where the data ends; the periods between that and today's period must be
    forecast too before the n periods asked for begin (on 2026-12-07, "the next 3 months" of a
    series ending in May are December to February, nine steps ahead). No `n`: the series' usual
    horizon, also counted from today.
    """
    first = period_start(series, pd.Timestamp(today()))
    gap = periods_until(series, first - pd.DateOffset(days=1)) or 0
    if n and unit != "day" and cat.frequency(series) == "daily":
        # "The next 2 weeks" of a daily series: the trading days in those calendar weeks, not 10
        # weekdays (a week with a holiday has fewer; the Spring Festival week may have none).
        end = first + pd.DateOffset(**{f"{unit}s": n}) - pd.DateOffset(days=1)
        asked = trading_days.trading_days(first, end, calendar_of(series))
        return gap + max(1, len(asked)), first
    return gap + (cat.periods(series, n, unit) if n else cat.default_horizon(series)), first


def gap_target(series: str, start: str | None, end: str | None) -> pd.Timestamp | None:
    """A period after the data's last date that has begun by today ("上个月" on stale data): the
    end of that period, which a forecast can reach; None when the data covers any of it."""
    facts = cat.catalogue().get(series)
    # Annual crude steel is a finished historical table (to 2018), not data that lags: no forecast.
    if facts is None or not facts.end or not start or facts.frequency not in ("daily", "weekly", "monthly"):
        return None
    lo = bound(start, False)
    if lo <= pd.Timestamp(facts.end) or lo > pd.Timestamp(today()):
        return None
    return bound(end or start, True)


def fresher_note(series: str, fresher: str, start: str | None, end: str | None, zh: bool) -> str | None:
    """A period after `series`' last date that `fresher` has data for: answer with it, and say so."""
    if gap_target(series, start, end) is None or not start:
        return None
    facts, other = cat.catalogue()[series], cat.catalogue()[fresher]
    if bound(start) > pd.Timestamp(other.end):
        return None
    return (f"{cat.name(series, True)}（月度）只到 {facts.end}，没有这段时间的值；{cat.name(fresher, True)}"
            f"（日度，{UNIT_ZH_SHORT.get(other.unit, other.unit)}）有这段时间的实际数据，下面用它回答。" if zh else
            f"{cat.name(series, False)} (monthly) ends on {facts.end} and has no value for this period; "
            f"{cat.name(fresher, False)} (daily, {other.unit}) has actual data for it, so the answer uses it.")


UNIT_ZH_SHORT = {"CNY/t": "元/吨", "US$/dmt": "美元/干吨"}


def one_month(start: str | None, end: str | None) -> str | None:
    """"YYYY-MM" when [start, end] lies in one calendar month ("上个月", "2026年9月"), else None."""
    if not start:
        return None
    lo, hi = bound(start), bound(end or start, True)
    # From the month's first day ("这周" on 2026-12-07 lies in one month but is a week, not that month).
    return lo.strftime("%Y-%m") if lo.day == 1 and lo.to_period("M") == hi.to_period("M") else None


_PMI_MEANING = re.compile(r"(?:pmi|荣枯线|采购经理).{0,16}(?:意味着|什么意思|啥意思|代表什么|说明什么|是什么|怎么理解|"
                          r"\bmeans?\b|\bmeaning\b|what does)|what (?:does|is) (?:the )?(?:pmi|pmi of)|荣枯线是",
                          re.I)


def asks_pmi_meaning(text: str) -> bool:
    return bool(_PMI_MEANING.search(text)) and not re.search(r"预测|会|forecast|will", text, re.I)


def pmi_meaning(zh: bool) -> str:
    """What the PMI is and what 50 means: a definition, not a number from the data."""
    if zh:
        return ("制造业采购经理指数（PMI）是国家统计局每月对制造业企业采购经理的调查汇总成的扩散指数：50 是荣枯线，"
                "高于 50 表示报告情况改善（生产、新订单等扩张）的企业多于报告恶化的，制造业总体在扩张；低于 50 表示在收缩；"
                "离 50 越远，扩张或收缩越普遍。它说的是方向和广度，不是增长的幅度，也不是价格。下面是我数据里的最新值。")
    return ("The manufacturing PMI (purchasing managers' index) is a diffusion index the NBS compiles each month from a "
            "survey of purchasing managers: 50 is the line between expansion and contraction. Above 50, more firms "
            "report improvement (output, new orders) than deterioration, so manufacturing as a whole is expanding; "
            "below 50 it is contracting; the farther from 50, the broader the move. It measures direction and breadth, "
            "not the size of growth, and it is not a price. Below is the latest value in my data.")


def part_assumed(words: str, start: str, end: str, zh: bool) -> str:
    """"一季度螺纹钢均价" named no year: the latest such part begun by today is the one answered (the
    next one not yet over when the question asked ahead)."""
    return _year_assumed(f"“{words}”", f'"{words}"', "一个", start, f"{start} 至 {end}", f"{start} to {end}", zh)


def month_assumed(month: str, zh: bool) -> str:
    """"8月的均价" named no year: the latest such month up to today is the one answered (the next one
    from this month on when the question asked ahead, "3月份会涨吗")."""
    n = int(month[5:])
    return _year_assumed(f"“{n}月”", f"month {n}", f" {n} 月", month, month, month, zh)


def _year_assumed(zh_words: str, en_words: str, which: str, start: str, zh_period: str, en_period: str,
                  zh: bool) -> str:
    ahead = start > today().isoformat()[:7]
    if zh:
        return (f"{zh_words}没有说年份，按今天（{today().isoformat()}）{'之后' if ahead else '之前'}最近的{which}，"
                f"即 {zh_period}，回答。")
    return (f"No year was given for {en_words}: this answers the {'next' if ahead else 'latest'} one "
            f"{'after' if ahead else 'up to'} today ({today().isoformat()}), {en_period}.")


def month_with_data(series: str) -> tuple[str, str]:
    """The last calendar month `series` has data in: its first day and the data's last day in it
    (daily data), or the month itself ("2026-05") for a monthly value."""
    end = pd.Timestamp(cat.catalogue()[series].end)
    if cat.frequency(series) != "daily":
        return end.strftime("%Y-%m"), end.strftime("%Y-%m")
    return end.replace(day=1).date().isoformat(), end.date().isoformat()


def month_after_data(series: str, asked: str, zh: bool) -> str:
    """"2026年9月铁矿石期货价格" when the data ends before it: no value for that month, and the
    nearest earlier month that has data (part of it for daily data), said not to be the month asked."""
    first, last = month_with_data(series)
    month = first[:7]
    whole = cat.frequency(series) != "daily" or pd.Timestamp(last) == pd.Timestamp(first) + pd.offsets.MonthEnd(0)
    last = cat.catalogue()[series].end
    nm_zh, nm_en = cat.name(series, True), cat.name(series, False)
    if zh:
        part = "" if whole else f"（只到 {last}，不是整月）"
        return (f"我的{nm_zh}数据只到 {last}，没有 {asked} 的数据；下面是它之前最近一个有数据的月份 {month}{part}"
                f"的数据，不是你问的那个月。要看模型对 {asked} 的估计（带区间），可以问“预测{asked}{nm_zh}”。"
                + carried_over(series, asked, zh))
    part = "" if whole else f" (to {last} only, not the whole month)"
    return (f"My {nm_en} data ends on {last}, so there is no data for {asked}; below is the nearest earlier "
            f"month with data, {month}{part}, not the month you asked about. For the model's estimate of "
            f"{asked} (with ranges), ask 'forecast {nm_en} for {asked}'." + carried_over(series, asked, zh))


def carried_over(series: str, asked: str, zh: bool) -> str:
    """The World Bank's month past its data that the DCE futures traded in (`nowcast`'s bridged months):
    what the futures' monthly average puts it at, with its band, said to be an estimate. "" otherwise."""
    spec = find_spec(series)
    if spec is None or spec.indicator is None or not re.fullmatch(r"\d{4}-\d{2}", asked):
        return ""
    month = pd.Timestamp(asked)
    steps = periods_until(series, month)
    if not steps or steps < 1:
        return ""
    fc = market.forecast(series, steps, "nowcast")
    if month not in fc.bridged:
        return ""
    unit = cat.catalogue()[series].unit
    mid, lo, hi = (f"{v.iloc[-1]:,.2f}" for v in (fc.mean, fc.lower[80], fc.upper[80]))
    indicator, through = cat.name(str(fc.indicator), zh), fc.indicator_end.date().isoformat() if fc.indicator_end else ""
    if zh:
        return (f"{indicator}在 {asked} 有交易（数据到 {through}）：按期货月均价推算，{asked} 约 {mid} "
                f"{UNIT_ZH_SHORT.get(unit, unit)}（80% 区间 {lo} – {hi}），这是估计，不是实际数据。")
    return (f" The {indicator} traded in {asked} (data to {through}): carried over by the futures' monthly average, "
            f"{asked} is about {mid} {unit} (80% range {lo} – {hi}), an estimate, not data.")


def gap_note(series: str, start: str, end: str | None, zh: bool) -> str:
    """Why a period between the data's end and today gets a forecast instead of a value."""
    facts = cat.catalogue()[series]
    period = start if not end or end == start else f"{start} – {end}"
    if zh:
        return (f"我的{cat.name(series, True)}数据只到 {facts.end}，{period} 没有实际数据（数据在那之后还没有更新）。"
                f"下面是对 {period} 的预测：从 {facts.end} 起逐期预测，中间各期本身也是预测；"
                f"{period} 的各行给出中位预测和 80%/95% 区间，这是一个可能的范围，不是实际价格。")
    return (f"My {cat.name(series, False)} data ends on {facts.end}, so I have no actual value for {period} "
            "(the data has not been updated since). Below is a "
            f"forecast for {period} instead: it runs from {facts.end}, the periods in between are "
            f"forecasts too, and the rows for {period} give the median and 80%/95% ranges: a range "
            "of likely values, not the actual price.")


def ahead_note(series: str, n: int, unit: str, first: pd.Timestamp, zh: bool) -> str | None:
    """'The next n months' on data that ends before today: where the forecast starts and why."""
    facts = cat.catalogue().get(series)
    if facts is None or not facts.end or first <= pd.Timestamp(facts.end):
        return None
    day = first.date().isoformat()
    if zh:
        return (f"你问的是今天（{today().isoformat()}）起的未来 {n} {_UNIT_ZH[unit]}，从 {day} 开始。"
                f"我的{cat.name(series, True)}数据只到 {facts.end}，所以预测从那天之后开始；"
                f"{facts.end} 到今天之间的各期没有实际数据，本身也是预测，你问的时期排在它们之后。")
    return (f"You asked for the next {n} {unit}(s) from today ({today().isoformat()}), starting {day}. "
            f"My {cat.name(series, False)} data ends on {facts.end}, so the forecast starts there; the "
            "periods between that and today have no actual data and are forecasts themselves, and "
            "the ones you asked about come after them.")


def future_note(series: str, target: pd.Timestamp, tomorrow: bool, zh: bool) -> str:
    """What a forecast to a named future date can and cannot say."""
    facts = cat.catalogue()[series]
    day = target.date().isoformat()
    if zh:
        head = (f"没有人能给出明天（{day}）的确切价格，我也不会编一个。" if tomorrow
                else f"你问的时期（到 {day}）还没有实际数据。")
        return (f"{head}我的{cat.name(series, True)}数据只到 {facts.end}，下面是从那天起一直预测到 "
                f"{day} 所在期的结果：最后一行对应你问的时间，给出中位预测和 80%/95% 区间；"
                "离最后数据越远，区间越宽，它是一个概率范围，不是确定的价格。")
    head = (f"Nobody can give tomorrow's ({day}) exact price, and I will not make one up." if tomorrow
            else f"No data holds the period you ask about (to {day}) yet.")
    return (f"{head} My {cat.name(series, False)} data ends on {facts.end}; below is a forecast "
            f"from there to the period containing {day}: the last row is the time you asked "
            "about, with the median and 80%/95% ranges. The further from the data, the wider the "
            "range: it is a range of likely prices, not a price.")


HOLIDAY_ZH = {"New Year's Day": "元旦", "Spring Festival": "春节", "Tomb-sweeping Day": "清明节",
              "Labour Day": "劳动节", "Dragon Boat Festival": "端午节", "Mid-autumn Festival": "中秋节",
              "National Day": "国庆节"}
_WEEKDAY_ZH = "一二三四五六日"


def closed_tomorrow_note(series: str, closed: pd.Timestamp, trading: pd.Timestamp, zh: bool) -> str:
    """"明天的价格" when tomorrow the exchange does not trade: no price that day, the next one's."""
    facts = cat.catalogue()[series]
    day, nxt = closed.date().isoformat(), trading.date().isoformat()
    holiday = next((c.holiday for c in trading_days.closures_between(closed, closed)), None) \
        if calendar_of(series) == trading_days.CN_EXCHANGE and closed.weekday() < 5 else None
    if zh:
        why = f"交易所休市（{HOLIDAY_ZH.get(holiday, holiday)}）" if holiday else f"星期{_WEEKDAY_ZH[closed.weekday()]}，不交易"
        return (f"明天（{day}）{why}，没有价格，也没有人能给出那天的价格。下一个交易日是 {nxt}：我的"
                f"{cat.name(series, True)}数据只到 {facts.end}，下面是从那天起一直预测到 {nxt} 的结果，最后一行"
                "给出中位预测和 80%/95% 区间；它是一个概率范围，不是确定的价格。")
    why = f"an exchange holiday ({holiday})" if holiday else f"a {closed.strftime('%A')}, with no trading"
    return (f"Tomorrow ({day}) is {why}: there is no price for it. The next trading day is {nxt}: my "
            f"{cat.name(series, False)} data ends on {facts.end}; below is a forecast from there to {nxt}, "
            "the last row with the median and 80%/95% ranges: a range of likely prices, not a price.")


def too_far(series: str, target: pd.Timestamp, zh: bool) -> str:
    facts = cat.catalogue()[series]
    day = target.date().isoformat()
    if zh:
        return (f"{day} 离{cat.name(series, True)}的最后数据（{facts.end}）太远，统计预测在这么远的时间上"
                "没有意义，我不给出数字。可以问更近的时间，例如“预测未来6个月”。")
    return (f"{day} is too far from the last {cat.name(series, False)} data ({facts.end}) for a "
            "statistical forecast to mean anything, so I give no number. Ask about a nearer "
            "time, e.g. 'forecast the next 6 months'.")


def why_note(zh: bool) -> str:
    if zh:
        return ("关于“为什么”：我的数据只有价格和少数宏观序列（没有新闻、政策、库存、发运等信息），"
                "只能说明价格怎样变化、和哪些序列同步变动，不能证明变化的原因。")
    return ("On 'why': my data holds prices and a few macro series (no news, policy, inventories "
            "or shipments), so it shows how prices moved and what moved with them, not what caused it.")


def why_reply(last_series: str | None, zh: bool) -> str:
    """A bare "why?": say what the data cannot show, and what it can."""
    nm = cat.name(last_series, zh) if last_series else ("铁矿石" if zh else "iron ore")
    # Two other series to relate it to (never the series itself: "PMI和PMI的关系").
    others = [o for o in ("shfe_rebar_daily", "china_pmi_monthly", "usd_cnh_daily") if o != last_series][:2]
    a, b = (cat.name(o, zh) for o in others)
    if zh:
        return (why_note(True) + f"\n能做的是看{nm}和其它序列的历史同步关系（不是因果），例如："
                f"“{nm}和{a}的相关性”“{nm}和{b}的关系”，或情景“如果粗钢产量下降5%，铁矿石会怎样？”。")
    return (why_note(False) + f"\nWhat I can show is how {nm} moved with other series (co-movement, "
            f"not causation), e.g. 'correlation between {nm} and {a}', '{nm} and {b}', or the "
            "scenario 'if China's crude steel output falls 5%, what happens to iron ore?'.")


def day_in_month(series: str, q: Query) -> str | None:
    """"The price on 2024-05-15" of a monthly series: its month's average, said so (q is widened)."""
    facts = cat.catalogue().get(series)
    day = q.start if q.start == q.end and q.relative is None else None  # one named day, not 去年
    if q.start and q.end and q.start != q.end and q.start[:7] == q.end[:7] and all(
            re.fullmatch(r"\d{4}-\d{2}-\d{2}", d) for d in (q.start, q.end)):
        day = f"{q.start} 至 {q.end}" if q.zh else f"{q.start} to {q.end}"  # "12月底": days of one month
    elif not day or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        return None
    if facts is None or facts.frequency != "monthly":
        return None
    month = str(q.start)[:7]
    q.start = q.end = month
    if "50" in facts.unit:  # the PMI is a monthly survey index, not an average of prices
        if q.zh:
            return f"{cat.name(series, True)}是月度指数，没有单日数值：{day} 用的是 {month} 的数值。"
        return f"{cat.name(series, False)} is a monthly index with no daily values: for {day} this is {month}'s."
    if q.zh:
        return f"{cat.name(series, True)}是月度均价，没有单日价格：{day} 用的是 {month} 整月的均价。"
    return (f"{cat.name(series, False)} is a monthly average with no daily prices: for {day} this is "
            f"the average of {month}.")


def closed_day(series: str, q: Query) -> str | None:
    """"铁矿石期货2024年6月8日的价格" (a Saturday), "2025年10月1日" (国庆节): a day a daily series has
    no row for. It was answered "no data between 2024-06-08 and 2024-06-08", as if the data had a
    hole; now the reason (weekend, holiday, or a gap in the data) is said and the nearest days
    before and after that have a value are shown instead (q is widened to them)."""
    facts = cat.catalogue().get(series)
    day = q.start if q.start == q.end and q.relative is None else None
    if facts is None or facts.frequency != "daily" or not day or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        return None
    when = pd.Timestamp(day)
    index = market.load_series(series).index
    if not index[0] < when < index[-1] or when in index:
        return None
    before, after = index[index < when][-1].date().isoformat(), index[index > when][0].date().isoformat()
    q.start, q.end = before, after
    holiday = next((c.holiday for c in trading_days.closures_between(when, when)), None) \
        if calendar_of(series) == trading_days.CN_EXCHANGE and when.weekday() < 5 else None
    if q.zh:
        why = (f"是星期{_WEEKDAY_ZH[when.weekday()]}，不交易" if when.weekday() >= 5 else
               f"交易所休市（{HOLIDAY_ZH.get(holiday, holiday)}）" if holiday else "在数据里没有记录（数据缺口）")
        return (f"{day} {why}，{cat.name(series, True)}那天没有价格。下面是前后最近有数据的两天："
                f"{before}（起点）和 {after}（终点）。")
    why = (f"a {when.strftime('%A')}, with no trading" if when.weekday() >= 5 else
           f"an exchange holiday ({holiday})" if holiday else "missing from the data (a gap)")
    return (f"{day} is {why}: the {cat.name(series, False)} has no price for it. Below are the nearest "
            f"days before and after that have one: {before} (start) and {after} (end).")


def settle_not_close(series: str, text: str, zh: bool) -> str | None:
    """"收盘价" asked of a futures series whose prices are settles: said, not silently swapped."""
    facts = cat.catalogue().get(series)
    if facts is None or calendar_of(series) != trading_days.CN_EXCHANGE or not (m := re.search(
            r"收盘|开盘|closing|\bclose\b|opening|\bopen\b", text, re.I)):
        return None
    opening = bool(re.search(r"开盘|open", m.group(0), re.I))
    if zh:
        return (f"注意：这里的期货价格是结算价（当天成交量加权的均价），不是{'开盘价' if opening else '收盘价'}；"
                + ("开盘价可能和结算价相差较大，我的预测也是结算价的预测。" if opening else "两者通常相差不大，但不相同。"))
    return ("Note: these futures prices are settlement prices (the day's volume-weighted average), not "
            + ("opening prices; the open can differ a lot from the settle, and my forecast is of the settle." if opening
               else "closing prices; the two are usually close but not the same."))


def level_unit_assumed(value: float, currency: str, zh: bool) -> str:
    """"如果铁矿石跌到80": no unit given; the one whose price the number is nearer to, said so."""
    series = "iron_ore_wb_monthly" if currency == "USD" else "dce_iron_ore_daily"
    unit = cat.catalogue()[series].unit
    if zh:
        return (f"你没有说 {value:g} 的单位；它更接近{cat.name(series, True)}的价格水平，"
                f"所以按 {UNIT_ZH_SHORT.get(unit, unit)} 理解。")
    return (f"You did not give a unit for {value:g}; it is nearer the level of the "
            f"{cat.name(series, False)}, so I read it as {unit}.")


def level_in_other_currency(series: str, currency: str, zh: bool) -> str:
    """A level in the other currency than the driver's own: not converted, said why."""
    unit = cat.catalogue()[series].unit
    given = ("人民币" if currency == "CNY" else "美元") if zh else ("yuan" if currency == "CNY" else "US dollars")
    if zh:
        return (f"{cat.name(series, True)}以 {UNIT_ZH_SHORT.get(unit, unit)} 计价，你给的价位是{given}。"
                "我不做换算：两种价格之间不只是汇率（还有运费、税费、品位和合约的差别），换算出的价位会误导情景。"
                f"请用 {UNIT_ZH_SHORT.get(unit, unit)} 给出价位再问。")
    return (f"The {cat.name(series, False)} is priced in {unit} and you gave a level in {given}. I do not "
            "convert it: the two prices differ by more than the exchange rate (freight, taxes, grade, "
            f"contract), so a converted level would mislead the scenario. Please give the level in {unit}.")


def level_without_driver(value: float, zh: bool) -> str:
    """"如果它跌到2900元" with nothing talked about before: which price is meant is unknown."""
    if zh:
        return (f"我不知道 {value:g} 指的是哪个价格。请说明品种，例如“如果螺纹钢跌到{value:g}元/吨，铁矿石会怎样？”。")
    return (f"I do not know which price {value:g} refers to. Please name it, e.g. 'if rebar falls to "
            f"{value:g} CNY/t, what happens to iron ore?'.")


def level_too_far(series: str, value: float, zh: bool) -> str:
    """A level a third or three times the series' price: no scenario, and the likely mix-up said."""
    unit = cat.catalogue()[series].unit
    if zh:
        return (f"{value:g} {UNIT_ZH_SHORT.get(unit, unit)} 与{cat.name(series, True)}的价格水平相差三倍以上，"
                "这样的变动在数据里没有任何可比的经验，我不据此做情景估计。请确认品种和单位"
                "（例如这个数字是不是另一个品种的价格）。")
    return (f"{value:g} {unit} is more than three times away from the level of the {cat.name(series, False)}: "
            "the data holds no move like that to estimate from, so I make no scenario of it. Please check "
            "the series and the unit (is the number another series' price?).")


# Series traded on DCE/SHFE, which close on China's public holidays (the iron ore default included:
# "国庆节期间铁矿石价格" asks about days the futures do not trade).
EXCHANGE_SERIES = frozenset(s for s in ("iron_ore_wb_monthly", "dce_iron_ore_daily", "shfe_rebar_daily",
                                        "shfe_hrc_daily", "dce_coke_daily", "dce_coking_coal_daily"))


def closed_for_holiday(series: str, holiday: str, zh: bool) -> str:
    """"国庆节期间铁矿石期货价格": the exchanges do not trade then, so no price exists for those days."""
    exchange_series = series if calendar_of(series) == trading_days.CN_EXCHANGE else "dce_iron_ore_daily"
    if zh:
        return (f"{HOLIDAY_ZH.get(holiday, holiday)}期间大商所和上期所休市，{cat.name(exchange_series, True)}"
                "这些天没有成交，也就没有价格，我不会编一个。可以问节前最后一个交易日或节后第一个交易日的价格，"
                "或者问包含假期的整个月份（例如“2025年10月铁矿石期货均价”）。")
    return (f"The exchanges (DCE, SHFE) are closed over {holiday}, so the {cat.name(exchange_series, False)} "
            "has no trades and no price on those days, and I will not make one up. Ask for the last trading "
            "day before the holiday or the first one after it, or for the whole month that holds it "
            "(e.g. 'average DCE iron ore futures price in October 2025').")


def daily_moves_note(zh: bool) -> str:
    """A one-day move of "iron ore": the World Bank price is a monthly average, so the daily futures."""
    if zh:
        return "单日涨跌要用日度价格：世界银行铁矿石价格是月均价，所以这里用大商所铁矿石期货（元/吨，结算价）。"
    return ("A one-day move needs daily prices: the World Bank iron ore price is a monthly average, so this "
            "uses the DCE iron ore futures (CNY/t, settlement prices).")


def today_reply(zh: bool, text: str = "") -> str:
    """"今天是几号": today's date (the one answers count from), and how far each kind of data reaches;
    "明天是星期几": that day's date and weekday first."""
    now = today()
    shift = next((n for w, n in (("前天", -2), ("昨天", -1), ("后天", 2), ("明天", 1), ("yesterday", -1),
                                 ("tomorrow", 1)) if w in text.lower()), 0)
    if shift:
        day = pd.Timestamp(now) + pd.Timedelta(days=shift)
        word = next(w for w in ("前天", "昨天", "后天", "明天", "yesterday", "tomorrow") if w in text.lower())
        if zh:
            return f"{word}是 {day.date()}（星期{_WEEKDAY_ZH[day.weekday()]}）；今天是 {now.isoformat()}。"
        return f"{word.capitalize()} is {day.date()} (a {day.strftime('%A')}); today is {now.isoformat()}."
    facts = cat.catalogue()
    dce, wb, pmi = (facts[s].end for s in ("dce_iron_ore_daily", "iron_ore_wb_monthly", "china_pmi_monthly"))
    if zh:
        return (f"今天是 {now.isoformat()}（星期{_WEEKDAY_ZH[now.weekday()]}）。我回答里的“今天”“上个月”“明年”都从这一天算起。"
                f"我的数据没有今天的行情：大商所/上期所期货日度数据到 {dce}，世界银行月度价格到 {wb[:7]}，PMI 到 {pmi[:7]}。")
    return (f"Today is {now.isoformat()} ({now.strftime('%A')}). 'Today', 'last month' and 'next year' in my answers "
            f"count from this date. My data has no prices for today: the DCE/SHFE futures (daily) end on {dce}, "
            f"the World Bank monthly prices in {wb[:7]}, the PMI in {pmi[:7]}.")


def day_named(word: str, day: str, zh: bool) -> str:
    when = pd.Timestamp(day)
    if zh:
        return f"“{word}”是 {day}（星期{_WEEKDAY_ZH[when.weekday()]}，从今天 {today().isoformat()} 算起）。"
    return f"'{word}' is {day} (a {when.strftime('%A')}, counted from today, {today().isoformat()})."


def day_after_data(series: str, word: str, day: str, zh: bool) -> str:
    """"上周五的价格" when the data ends months before it: no price for that day, and the nearest
    earlier day that has one (the data's last), said to be that day and not the one asked."""
    end = cat.catalogue()[series].end
    when = pd.Timestamp(day)
    age = (when - pd.Timestamp(end)).days
    label = f"“{word}”是 {day}（星期{_WEEKDAY_ZH[when.weekday()]}）。" if zh and word else ""
    label_en = f"'{word}' is {day} (a {when.strftime('%A')}). " if word else ""
    if zh:
        return (f"{label}我的{cat.name(series, True)}数据只到 {end}，没有 {day} 的价格；下面是它之前最近一个有数据的"
                f"交易日 {end} 的价格，比你问的那天早 {age} 天，不是那天的价格。要看模型对 {day} 的估计（带区间），"
                f"可以问“预测{day}{cat.name(series, True)}价格”。")
    return (f"{label_en}My {cat.name(series, False)} data ends on {end}, so there is no price for {day}; below is "
            f"the nearest earlier trading day with data, {end}, {age} days before the day you asked about, not "
            f"that day's price. For the model's estimate of {day} (with ranges), ask 'forecast "
            f"{cat.name(series, False)} for {day}'.")


def christmas_note(series: str, day: str, zh: bool) -> str:
    """25 December: no holiday on China's exchanges (DCE/SHFE trade unless it is a weekend), while
    markets abroad (SGX, London, New York) close, for which there is no data here. The nearest trading
    days before and after are given with their prices."""
    when = pd.Timestamp(day)
    values = market.load_series(series)
    before = values[values.index < when]
    after = values[values.index > when]
    on = values.get(when)
    parts_zh, parts_en = [], []
    if len(before):
        parts_zh.append(f"前一个交易日 {before.index[-1].date()}：{before.iloc[-1]:,.2f}")
        parts_en.append(f"the trading day before, {before.index[-1].date()}: {before.iloc[-1]:,.2f}")
    if len(after):
        parts_zh.append(f"后一个交易日 {after.index[0].date()}：{after.iloc[0]:,.2f}")
        parts_en.append(f"the trading day after, {after.index[0].date()}: {after.iloc[0]:,.2f}")
    unit = cat.catalogue()[series].unit
    weekend = when.weekday() >= 5
    if zh:
        status = (f"是星期{_WEEKDAY_ZH[when.weekday()]}，交易所本来就不交易" if weekend else
                  f"是星期{_WEEKDAY_ZH[when.weekday()]}；圣诞节不是中国的法定假日，大商所和上期所照常交易"
                  + (f"，{cat.name(series, True)}当天结算价 {on:,.2f} {UNIT_ZH_SHORT.get(unit, unit)}" if on is not None else ""))
        return (f"圣诞节 {day} {status}。境外市场（新加坡交易所 SGX 铁矿石、伦敦、纽约）当天休市，我没有那些市场的数据。"
                f"附近的交易日（{UNIT_ZH_SHORT.get(unit, unit)}）：{'；'.join(parts_zh)}。")
    status = (f"is a {when.strftime('%A')}, when the exchanges do not trade anyway" if weekend else
              f"is a {when.strftime('%A')}; Christmas is no public holiday in China, so DCE and SHFE trade as usual"
              + (f": the {cat.name(series, False)} settled at {on:,.2f} {unit}" if on is not None else ""))
    return (f"Christmas Day {day} {status}. Markets abroad (SGX iron ore, London, New York) are closed that day; I "
            f"have no data from them. Nearby trading days ({unit}): {'; '.join(parts_en)}.")


def ore_beside_futures_note(zh: bool) -> str:
    wb = cat.catalogue()["iron_ore_wb_monthly"]
    if zh:
        return (f"铁矿石和其他期货比较一段时间时，用大商所铁矿石期货（元/吨，同样的交易日）；世界银行月度均价按月计、"
                f"只到 {wb.end}，和日度期货的起止日期对不上。")
    return ("Iron ore set beside other futures over a period is the DCE iron ore futures (CNY/t, the same trading "
            f"days); the World Bank's monthly averages run by month and end on {wb.end}, so their dates would not match.")


def day_is_futures_note(text: str, zh: bool) -> str:
    """"铁矿石的历史最高价是哪天": the day is the futures'; the World Bank's extreme is a month."""
    values = market.load_series("iron_ore_wb_monthly")
    low = bool(re.search(r"最低|最便宜|lowest|cheapest|bottom", text, re.I))
    day, value = (values.idxmin(), values.min()) if low else (values.idxmax(), values.max())
    if zh:
        return ("问的是哪一天，所以用日度的大商所铁矿石期货（元/吨）；世界银行价格是月均价（美元/干吨），"
                f"只能说到月份，它的{'最低' if low else '最高'}月是 {day:%Y-%m}（{value:,.2f} 美元/干吨）。")
    return ("A day was asked, so this is the daily DCE iron ore futures (CNY/t); the World Bank price is a monthly "
            f"average (US$/dmt) and names months only: its {'lowest' if low else 'highest'} month was {day:%Y-%m} "
            f"({value:,.2f} US$/dmt).")


def yuan_price_note(zh: bool) -> str:
    if zh:
        return ("人民币计价的铁矿石价格是大商所铁矿石期货（元/吨，含税、港口交货的连续主力合约结算价）；"
                "世界银行的 CFR 中国价格以美元/干吨计价，不是人民币价格。")
    return ("Iron ore priced in yuan is the DCE iron ore futures (CNY/t, VAT included, port delivery, continuous main "
            "contract settle); the World Bank CFR China price is in US$/dmt, not yuan.")


_CONTRACT_BASIS_ZH = {
    "annual contract, Brazil (Vale Itabira) f.o.b. Tubarao, for Europe":
        "巴西淡水河谷伊塔比拉矿的年度合同价，FOB 图巴朗港，供欧洲",
    "annual contract, Brazil (Vale Carajas sinter feed) f.o.b. Ponta da Madeira, for Europe":
        "巴西淡水河谷卡拉加斯烧结粉的年度合同价，FOB 蓬塔达马德拉港，供欧洲",
}


def old_contract(start: str | None, end: str | None, zh: bool) -> str | None:
    """"1990年铁矿石价格": before 2006 the World Bank's iron ore column is an annual contract price in
    US cents per dry metric tonne unit (1 % Fe per dmt), f.o.b. Brazil for Europe — another unit and
    another market than the US$/dmt CFR China spot price. Given in its own unit, never mixed with it."""
    from orecast.market.loaders import _read_bundled_csv

    lo = bound(start, False) if start else None
    hi = bound(end, True) if end else None
    if lo is None or hi is None or lo >= pd.Timestamp("2006-01-01"):
        return None
    raw = _read_bundled_csv("iron_ore_monthly_worldbank.csv")  # the rows before 2006 the series drops
    rows = raw[(raw.index >= lo) & (raw.index <= min(hi, pd.Timestamp("2005-12-01")))]
    if rows.empty:
        return None
    years = rows.groupby(rows.index.year).agg(value=("iron_ore_price", "mean"), basis=("basis", "last"))
    shown = years if len(years) <= 6 else years.iloc[[0, -1]]
    unit_zh, unit_en = "美分/干吨度", "US cents per dmtu"
    if zh:
        lines = [f"- {y} 年：{r.value:,.2f} {unit_zh}（{_CONTRACT_BASIS_ZH.get(r.basis, r.basis)}）" for y, r in shown.iterrows()]
        more = f"（共 {len(years)} 年，这里只列首尾两年）" if len(years) > 6 else ""
        tail = "；你问的时期有一部分在 2006 年以后，那部分请单独问（单位是美元/干吨）" if hi >= pd.Timestamp("2006-01-01") else ""
        return ("世界银行的铁矿石价格在 2006 年以前是另一种价格：年度合同价，单位是美分/干吨度（每干吨里每 1% 铁含量的美分），"
                f"不是今天的 CFR 中国现货价（美元/干吨）{more}：\n" + "\n".join(lines) +
                "\n合同价全年各月相同。单位不同（要乘以品位才是每干吨的价格，而且是巴西离岸价，不含海运费），市场也不同（供欧洲，不是中国到岸），"
                f"所以我不把它换算成美元/干吨，也不和现在的价格放在一起比较{tail}。"
                "来源：世界银行大宗商品价格数据（Pink Sheet）“Iron ore, cfr spot”列的历史部分，单位和基准见该工作簿的说明。")
    lines = [f"- {y}: {r.value:,.2f} {unit_en} ({r.basis})" for y, r in shown.iterrows()]
    more = f" ({len(years)} years; the first and last shown)" if len(years) > 6 else ""
    tail = "; the part of your period from 2006 on is in US$/dmt, ask for it separately" if hi >= pd.Timestamp("2006-01-01") else ""
    return ("Before 2006 the World Bank iron ore price is another price: an annual contract price in US cents per dry "
            f"metric tonne unit (cents per 1% Fe per dry tonne), not today's CFR China spot price in US$/dmt{more}:\n"
            + "\n".join(lines) +
            "\nA contract price is the same in every month of its year. The unit differs (it must be multiplied by the "
            "ore's grade to give a price per tonne, and it is f.o.b. Brazil, without freight) and so does the market "
            "(for Europe, not delivered to China), so I do not convert it to US$/dmt or set it beside today's price"
            f"{tail}. Source: World Bank Commodity Price Data (The Pink Sheet), the historical part of the 'Iron ore, "
            "cfr spot' column; units and basis as the workbook describes them.")


def points_meaning(series: str, n: float, zh: bool) -> str:
    """"跌了10个点": in a price quote a point is one unit of the price (1 元/吨 for the yuan futures,
    1 US$ for a dollar price, one index point for the PMI), not a percent; both sizes, at the latest value."""
    facts = cat.catalogue()[series]
    value = float(cat.latest_value(series))
    unit = facts.unit
    if "50" in unit:  # the PMI: points are its own unit, and a percent of it means nothing useful
        return (f"PMI 的“{n:g} 个点”就是指数变动 {n:g}（例如从 50 到 {50 - n:g}），不是百分比。" if zh else
                f"For the PMI, '{n:g} points' is a change of {n:g} in the index (e.g. 50 to {50 - n:g}), not a percent.")
    u = UNIT_ZH_SHORT.get(unit, unit)
    share = n / value * 100
    if zh:
        return (f"行情里说的“点”一般是报价单位：{cat.name(series, True)}以 {u} 报价，1 个点 = 1 {u}，"
                f"所以“{n:g} 个点”就是 {n:,.2f} {u}；按最新值 {value:,.2f} {u}（{facts.end}）约是 {share:.2f}%。"
                f"不是 {n:g}%（{n:g}% 会是 {value * n / 100:,.2f} {u}）。")
    return (f"In a price quote a 'point' is usually one unit of the price: the {cat.name(series, False)} is quoted in "
            f"{unit}, so 1 point = 1 {unit} and 'down {n:g} points' means {n:,.2f} {unit} lower; at the latest value, "
            f"{value:,.2f} {unit} ({facts.end}), that is about {share:.2f}%. It is not {n:g}% ({n:g}% would be "
            f"{value * n / 100:,.2f} {unit}).")


def part_data_note(series: str, start: str, target: pd.Timestamp, zh: bool) -> str:
    """A period that began before the data's end and runs past it: data for the first part, a forecast
    for the rest (not "no data yet" for the whole period)."""
    facts = cat.catalogue()[series]
    a, b = bound(start).date().isoformat(), target.date().isoformat()
    if zh:
        return (f"你问的时期是 {a} 至 {b}：其中 {a} 至 {facts.end} 有{cat.name(series, True)}的实际数据，"
                f"{facts.end} 之后没有，下面是从那天起的预测（中位数和 80%/95% 区间，不是实际价格）。")
    return (f"You asked about {a} to {b}: the {cat.name(series, False)} has actual data from {a} to {facts.end} "
            f"and none after it; below is the forecast from there (medians with 80%/95% ranges, not prices).")


def holiday_edge_day(series: str, holiday: str, side: str, year_text: str | None,
                     zh: bool) -> tuple[str, str] | None:
    """The last trading day of `series` before the `holiday` closure (side "before") or the first one
    after it, in the year of `year_text` or else the latest such closure before today that the data
    reaches, with a note naming the closure. A named year past the data gives the exchange calendar's
    day (the planner then says the data stops before it)."""
    now = pd.Timestamp(today())
    named = bool(year_text and re.fullmatch(r"\d{4}(-.*)?", year_text))
    years = [int(str(year_text)[:4])] if named else [now.year, now.year - 1, now.year - 2]
    values = market.load_series(series)
    for year in years:
        try:
            days = [c.day for c in trading_days.closures_between(pd.Timestamp(year, 1, 1), pd.Timestamp(year, 12, 31))
                    if c.holiday == holiday]
        except Exception:  # noqa: BLE001 - a year with no holiday calendar: no answer from here
            return None
        if not days or (not named and pd.Timestamp(days[0]) > now):
            continue
        first, last = pd.Timestamp(days[0]), pd.Timestamp(days[-1])
        pick = values[values.index < first] if side == "before" else values[values.index > last]
        if side == "after" and (pick.empty or pick.index[0] - last > pd.Timedelta(days=10)):
            if not named:
                continue  # the data stops before it: the year before
            day = trading_days.next_trading_days(last, 1, calendar_of(series))[0].date().isoformat()
        elif side == "before" and (pick.empty or first - pick.index[-1] > pd.Timedelta(days=10)):
            if not named:
                continue
            day = (first - pd.Timedelta(days=1)).date().isoformat()
            while not trading_days.is_trading_day(pd.Timestamp(day), calendar_of(series)):
                day = (pd.Timestamp(day) - pd.Timedelta(days=1)).date().isoformat()
        else:
            day = (pick.index[-1] if side == "before" else pick.index[0]).date().isoformat()
        hz = HOLIDAY_ZH.get(holiday, holiday)
        if zh:
            return day, (f"{year} 年{hz}休市 {first.date()} 至 {last.date()}；{cat.name(series, True)}"
                         f"{'节前最后一个' if side == 'before' else '节后第一个'}交易日是 {day}。")
        return day, (f"{holiday} {year}: the exchange closed {first.date()} to {last.date()}; the "
                     f"{'last trading day before' if side == 'before' else 'first trading day after'} it is {day}.")
    return None


def figure_in_range(series: str, value: float, zh: bool) -> str | None:
    """"1000元一吨的铁矿石贵吗": where the figure stands in the series' history (share of days at or
    below it, and against the latest value)."""
    values = market.load_series(series)
    if values.empty:
        return None
    share = float((values <= value).mean() * 100)
    latest = float(values.iloc[-1])
    unit = cat.catalogue()[series].unit
    u = UNIT_ZH_SHORT.get(unit, unit) if zh else unit
    first = values.index[0].date()
    if zh:
        return (f"{value:,.2f} {u} 在{cat.name(series, True)} {first} 以来的历史里处于第 {share:.2f} 百分位"
                f"（{share:.2f}% 的交易日不高于它），比最新值 {latest:,.2f} {u}（{values.index[-1].date()}）"
                f"{'高' if value >= latest else '低'} {abs(value / latest - 1) * 100:.2f}%。")
    return (f"{value:,.2f} {u} is at the {share:.2f}th percentile of the {cat.name(series, False)} since {first} "
            f"({share:.2f}% of days at or below it), {abs(value / latest - 1) * 100:.2f}% "
            f"{'above' if value >= latest else 'below'} the latest value {latest:,.2f} {u} ({values.index[-1].date()}).")


def futures_in_yuan_note(zh: bool) -> str:
    if zh:
        return ("大商所铁矿石期货以元/吨计价，没有美元价格；以美元计的铁矿石价格是世界银行的 CFR 中国价格（美元/干吨），"
                "下面两者都给出，各用各的单位（不做换算）。")
    return ("The DCE iron ore futures are priced in CNY/t and have no dollar price; iron ore in dollars is the World "
            "Bank's CFR China price (US$/dmt). Both follow, each in its own unit (not converted).")


def threshold_periods(series: str, value: float, side: str, zh: bool) -> str | None:
    """The calendar years in which `series` was below (above) `value`, with how many of its
    observations were, and its first and last such date."""
    values = market.load_series(series)
    hit = values[values < value] if side == "below" else values[values > value]
    unit = cat.catalogue()[series].unit
    u = "" if "50" in unit else UNIT_ZH_SHORT.get(unit, unit) if zh else unit  # the PMI's level has no unit
    word = ("低于" if side == "below" else "高于") if zh else side
    per = "个交易日" if cat.frequency(series) == "daily" else "个月"
    per_en = "trading days" if cat.frequency(series) == "daily" else "months"
    if hit.empty:
        return (f"{cat.name(series, True)}在 {values.index[0].date()} 至 {values.index[-1].date()} 之间从来没有{word} "
                f"{value:,.2f} {u}（最低 {values.min():,.2f}，最高 {values.max():,.2f}）。" if zh else
                f"The {cat.name(series, False)} was never {word} {value:,.2f} {u} between {values.index[0].date()} "
                f"and {values.index[-1].date()} (low {values.min():,.2f}, high {values.max():,.2f}).")
    years = hit.groupby(hit.index.year).size()
    listing = ("，".join(f"{y} 年（{n} {per}）" for y, n in years.items()) if zh else
               ", ".join(f"{y} ({n} {per_en})" for y, n in years.items()))
    if zh:
        return (f"{cat.name(series, True)}{word} {value:,.2f}{' ' + u if u else ''} 的时期（{values.index[0].date()} 以来，共 {len(hit)} {per}，"
                f"占全部 {len(values)} {per}的 {len(hit) / len(values) * 100:.2f}%）：{listing}；"
                f"第一次 {hit.index[0].date()}，最近一次 {hit.index[-1].date()}。")
    return (f"The {cat.name(series, False)} was {word} {value:,.2f}{' ' + u if u else ''} (since {values.index[0].date()}, {len(hit)} "
            f"of {len(values)} {per_en}, {len(hit) / len(values) * 100:.2f}%) in: {listing}; "
            f"first on {hit.index[0].date()}, last on {hit.index[-1].date()}.")


def price_run(series: str, zh: bool) -> str:
    """"铁矿石期货连续下跌了几天": the run of rises (falls) the data ends with, dated."""
    values = market.load_series(series)
    change = values.diff().dropna()
    last = change.iloc[-1]
    if last == 0:
        return (f"{cat.name(series, True)}最后一天（{values.index[-1].date()}）持平，没有连续涨跌。" if zh else
                f"The {cat.name(series, False)} was unchanged on its last day ({values.index[-1].date()}): no run.")
    up = last > 0
    run = 0
    for c in reversed(change.to_list()):
        if (c > 0) != up or c == 0:
            break
        run += 1
    start = values.index[-run - 1]
    move = values.iloc[-1] / values.iloc[-run - 1] - 1
    unit = cat.catalogue()[series].unit
    if zh:
        return (f"到 {values.index[-1].date()} 为止，{cat.name(series, True)}已连续 {run} 个交易日{'上涨' if up else '下跌'}"
                f"（从 {start.date()} 的 {values.iloc[-run - 1]:,.2f} 到 {values.iloc[-1]:,.2f} {UNIT_ZH_SHORT.get(unit, unit)}，"
                f"{move * 100:+.2f}%）；{'没有在下跌' if up else '没有在上涨'}。")
    return (f"Up to {values.index[-1].date()} the {cat.name(series, False)} has {'risen' if up else 'fallen'} {run} trading "
            f"day(s) in a row (from {values.iloc[-run - 1]:,.2f} on {start.date()} to {values.iloc[-1]:,.2f} {unit}, "
            f"{move * 100:+.2f}%).")


def no_advice_note(zh: bool) -> str:
    if zh:
        return ("我不提供买卖建议：是否买入取决于你的仓位、成本、期限和风险承受能力，这些我都不知道，统计数据也不能预言方向。"
                "下面是价格现在所处的位置（历史百分位、波动率、回撤和近期涨跌），供你自己判断。")
    return ("I give no trading advice: whether to buy depends on your position, costs, horizon and risk tolerance, which "
            "I do not know, and statistics cannot call the direction. Below is where the price stands (percentile in "
            "its history, volatility, drawdown, recent changes) for your own judgement.")


def daily_forecast_note(zh: bool) -> str:
    if zh:
        return "按天或按周的预测要用日度价格：世界银行铁矿石价格是月均价，所以这里用大商所铁矿石期货（元/吨）。"
    return ("A forecast by days or weeks needs daily prices: the World Bank iron ore price is a monthly average, so "
            "this uses the DCE iron ore futures (CNY/t).")
