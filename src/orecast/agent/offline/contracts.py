""" "明年1月合约", "螺纹钢2701合约价格": one delivery month's contract, which the data does not hold.

It was answered from the continuous series (or the World Bank's monthly average) as if that were the
contract. The bundled futures are the exchange's continuous main contract: each day the most traded
contract, which changes a few times a year, and the files do not say which one a day is. So the
answer is the continuous contract's, said to be that, with what it cannot tell.
"""

from __future__ import annotations

import re

from orecast.agent.clock import today
from orecast.agent.offline import catalogue as cat

# Exchange codes: i2701 is iron ore's January 2027 contract, rb2705 rebar's May 2027 one.
_PREFIX = {"i": "dce_iron_ore_daily", "rb": "shfe_rebar_daily", "hc": "shfe_hrc_daily", "j": "dce_coke_daily",
           "jm": "dce_coking_coal_daily"}
_CODE = re.compile(r"(?<![a-z\d])(i|rb|hc|jm|j)?\s?(\d{2})(0[1-9]|1[0-2])(?!\d)\s*(合约|contract)?", re.I)
# "铁矿石2701", "螺纹钢 2705": a bare code right after a product's name is its contract, when its year is
# near today's (a contract trades for about a year) and no unit follows (not "螺纹钢2705元").
_NAMED_CODE = re.compile(r"(?:铁矿石?|螺纹钢?|热卷|热轧|焦炭|焦煤|iron ore|rebar|hrc|coking coal|coke)\s*(?:期货)?\s*"
                         r"(\d{2})(0[1-9]|1[0-2])(?![\d.,%年月日号元块点])(?!\s*(?:元|块|美元|yuan|cny|usd|dollars?|points?|%))",
                         re.I)
_MONTH_ZH = re.compile(r"(?:(\d{4})\s*年|(明年|今年|下一年|后年))?\s*(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月(?:份)?(?:的)?\s*(?:合约|交割)")
_MONTHS_EN = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
              "october", "november", "december")
_MONTH_EN = re.compile(r"\b(next year'?s\s+)?(" + "|".join(_MONTHS_EN) + r"|jan|may|sep|oct)\b(?:\s+(\d{4}))?\s+contract", re.I)
_ZH_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
              "十一": 11, "十二": 12}
_SHIFT = {"今年": 0, "明年": 1, "下一年": 1, "后年": 2}


def asked(text: str) -> tuple[str, str | None] | None:
    """The contract asked for as its code "YYMM" ("2701") and the series its exchange code names
    ("rb2705": rebar), None when no one contract is named."""
    for m in _CODE.finditer(text):
        if m.group(1) or m.group(4):  # a bare "2701" is a number, not yet a contract
            return f"{m.group(2)}{m.group(3)}", _PREFIX.get((m.group(1) or "").lower())
    now = today()
    for m in _NAMED_CODE.finditer(text):
        if abs(2000 + int(m.group(1)) - now.year) <= 2:  # "铁矿石2012" is a year, not a contract
            return f"{m.group(1)}{m.group(2)}", None
    if m := _MONTH_ZH.search(text):
        month = int(m.group(3)) if m.group(3).isdigit() else _ZH_DIGITS[m.group(3)]
        if not 1 <= month <= 12:
            return None
        year = int(m.group(1)) if m.group(1) else now.year + _SHIFT[m.group(2)] if m.group(2) \
            else now.year + (month <= now.month)  # no year: the next contract of that month
        return f"{year % 100:02d}{month:02d}", None
    if m := _MONTH_EN.search(text):
        word = m.group(2).lower()
        month = next(i for i, name in enumerate(_MONTHS_EN, 1) if name.startswith(word[:3]))
        year = int(m.group(3)) if m.group(3) else now.year + 1 if m.group(1) else now.year + (month <= now.month)
        return f"{year % 100:02d}{month:02d}", None
    return None


def note(series: str, code: str, zh: bool) -> str:
    """What the continuous contract's numbers below are, against the contract asked for."""
    name = cat.name(series, zh)
    month = f"20{code[:2]}-{code[2:]}"
    if zh:
        return (f"我的数据是{name}，即每天成交最活跃的主力合约连起来的序列，不是 {code} 合约（{month} 交割）本身；"
                "主力合约一年换几次，数据里没有标明某天是哪个合约，各合约之间还有价差（月差），所以我给不出 "
                f"{code} 合约的价格。下面是连续（主力）合约的数据，只能作为参考。")
    return (f"My data is the {name}: each day's most traded (main) contract joined into one series, not the "
            f"{code} contract (delivery {month}) itself. The main contract changes a few times a year, the data "
            "does not say which contract a day is, and contracts trade at spreads to one another, so I cannot "
            f"give the {code} contract's price. Below is the continuous (main) contract's, for reference only.")
