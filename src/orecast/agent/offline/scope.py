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
    "trading_volume": ("期货成交量和持仓量（我的工具只提供结算价）",
                       "futures trading volume and open interest (my tools serve settlement prices only)"),
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
    if hi <= last or (start and bound(start, False) > last):
        return None
    period = f"{bound(start).date() if start else facts.start} – {hi.date().isoformat()}"
    return (f"你问的时期是 {period}，但我的{cat.name(series, True)}数据只到 {facts.end}：下面的数字只覆盖到 "
            f"{facts.end}，不是整个时期。" if zh else
            f"You asked about {period}, but my {cat.name(series, False)} data ends on {facts.end}: the "
            "figures below stop there and do not cover the whole period.")


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
    if facts is None or facts.frequency != "monthly" or not day or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        return None
    month = day[:7]
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
    if facts is None or calendar_of(series) != trading_days.CN_EXCHANGE or not re.search(
            r"收盘|closing|\bclose\b", text, re.I):
        return None
    return ("注意：这里的期货价格是结算价（当天成交量加权的均价），不是收盘价；两者通常相差不大，但不相同。" if zh else
            "Note: these futures prices are settlement prices (the day's volume-weighted average), not "
            "closing prices; the two are usually close but not the same.")


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
