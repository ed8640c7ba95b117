"""Reading one question: what is asked (intents), about which series, over which dates and horizon.

Pure functions over text, no data access, so they are cheap to test one by one. The analyst
(`model.py`) turns a `Query` into tool calls; `compose.py` writes the answer from the results.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date

from orecast.agent.offline.lexicon import find_method, find_series, is_chinese

INTENT_WORDS: dict[str, tuple[str, ...]] = {
    "help": (
        "what can you do", "help me understand what you", "your capabilities", "how can you help",
        "你能做什么", "你会什么", "你可以做什么", "功能", "怎么用",
    ),
    "catalogue": (
        "what data", "which series", "list series", "list the series", "available series",
        "what series", "datasets", "有哪些数据", "哪些序列", "数据目录", "有什么数据", "可用数据", "哪些数据",
        # "你的数据更新到什么时候？": each series' last date is in the catalogue (was out of scope).
        "数据更新到", "更新到什么时候", "更新到哪天", "数据截至", "数据截止", "数据到什么时候", "数据到哪天",
        "最新数据是哪天", "how recent is your data", "how up to date", "how current is your data",
        "data end", "data go up to", "data up to", "last update",
    ),
    "report": ("report", "export", "报告", "导出", "月报", "周报"),
    "methods": (
        "which method", "best method", "compare methods", "compare the methods", "method comparison",
        "compare forecasting methods", "哪种方法", "哪个方法", "方法比较", "比较方法", "比较预测方法",
        "最好的方法", "最准的方法", "最准", "most accurate", "best forecasting", "哪种预测方法",
        "哪个预测方法", "which forecasting method", "which model", "which forecast method", "best forecast method",
    ),
    "margin": ("mill margin", "steel margin", "margin", "profit", "利润", "毛利", "盈利"),
    "relate": (
        "correlation", "correlated", "correlate", "relationship", "relate", "beta", "co-move",
        "相关", "关系", "联动", "相关性", "领先", "滞后", "leads", "lags", "leading indicator",
        # "PMI对铁矿石有什么影响": how the two moved together (co-movement, said not to be a cause).
        "有什么影响", "有何影响", "影响大吗", "影响多大", "impact on", "effect on",
    ),
    "compare": ("compare", "comparison", " vs ", "versus", "对比", "比较"),
    "backtest": (
        "backtest", "back-test", "accuracy", "accurate", "error", "mape", "mae", "how good",
        "回测", "准确", "误差", "精度", "靠谱", "准不准", "准吗", "准么", "准不", "track record",
        "how well did", "reliable", "reliability", "how sure", "how confident", "可信度", "有多大把握", "把握多大",
    ),
    "forecast": (
        "forecast", "predict", "prediction", "outlook", "projection", "expect", "going to",
        "will it", "where will", "预测", "展望", "预计", "后市", "会涨", "会跌", "走向", "预判", "未来",
    ),
    "chart": ("chart", "plot", "graph", "draw ", "visuali", "图", "画", "绘"),  # not "drawdown"
    "describe": (
        "statistic", "stats", "average", "mean", "volatility", "volatile", "highest", "lowest",
        "maximum", "minimum", "peak", "describe", "summary", "summarise", "summarize", "range",
        "统计", "均价", "平均", "波动", "最高", "最低", "概况", "描述", "区间",
        "drawdown", "回撤", "高位", "低位", "什么水平", "历史水平", "哪个水平", "什么位置", "历史位置", "分位", "cheap", "expensive", "便宜", "贵", "bull market", "bear market", "bull or bear", "bullish", "bearish", "牛市", "熊市",
        "regime", "52-week high", "52-week low", "52 week high", "52 week low", "52周最高", "52周最低",
    ),
    # Mean change by calendar month (describe_series computes it): answered by "describe".
    "seasonal": (
        "seasonal", "seasonality", "which month", "which months", "time of year", "季节",
        "哪个月", "哪些月", "哪几个月", "几月份", "几月最", "几月通常", "什么月份", "什么时候最容易",
    ),
    "history": (
        "history", "historical", "trend", "over the past", "since", "between", "evolution",
        "how did", "path", "历史", "走势", "行情", "过去", "以来", "期间", "变化",
    ),
    "latest": (
        "current", "latest", "now", "today", "price of", "how much", "trading at", "last price",
        "最新", "现在", "目前", "当前", "多少", "现价", "报价", "价格",
    ),
}

# Several capitalised words make one name ("My name is Wang Wu"); a lower-case word ends it.
_EN_NAME = r"([A-Z][\w\-']{0,30}(?:\s+[A-Z][\w\-']{0,30}){0,2}|[a-z][\w\-']{0,30})"
NAME_SET = (
    re.compile(r"我叫\s*([^\s，,。.!！?？、；;]{1,12})"),
    re.compile(r"我的名字(?:是|叫)\s*([^\s，,。.!！?？、；;]{1,12})"),
    re.compile(r"\b(?i:my name is)\s+" + _EN_NAME),
    re.compile(r"\b(?i:call me)\s+" + _EN_NAME),
    re.compile(r"\b(?i:i am)\s+([A-Z][\w\-']{0,30}(?:\s+[A-Z][\w\-']{0,30}){0,2})\b"),
    re.compile(r"\b(?i:i'm)\s+([A-Z][\w\-']{0,30}(?:\s+[A-Z][\w\-']{0,30}){0,2})\b"),
)
ROLE_SET = (
    re.compile(r"我是(?:一名|一个|一位|个|名)?\s*([^\s，,。.!！?？、；;谁]{0,10}"
               r"(?:员|师|商|者|经理|采购|交易|分析|老板|学生|研究|投资|贸易|从业|经纪|主管|总监))"),
    re.compile(r"我(?:的职业|的工作)是\s*([^\s，,。.!！?？；;]{2,12})"),
    re.compile(r"\b(?i:i am an?|i'm an?|i work as an?)\s+([a-z][\w\- ]{1,40}?)(?=[,.;!?]|$| and )", re.I),
)
ROLE_ASK = (
    "what is my role", "what's my role", "what do i do", "what is my job", "my job?",
    "我是做什么的", "我的职业", "我的身份", "我是干什么的", "我做什么工作",
)
# "记住：我关注62%品位的CFR青岛价格" / "Remember: I follow …": a note for /memories/ (what follows).
REMEMBER_SET = (
    re.compile(r"^\s*(?:请|帮我)?(?:记住|记下)[：:，,\s]*(.+)", re.S),
    re.compile(r"^\s*(?:please\s+)?(?:remember|note)(?:\s+that)?\s*[:,]?\s+(.+)", re.I | re.S),
)
MEMORY_ASK = (
    "你记得我", "你还记得我", "记得我的偏好", "我的偏好", "关于我你记得", "你记住了什么", "你记得什么",
    "what do you remember", "remember about me", "my preferences", "do you remember me",
    "what do you know about me",
)
# "What did I ask first?": which earlier question; None = list them.
ORDINALS = (
    (re.compile(r"\bfirst\b|第一个|第1个|最开始|最早|一开始", re.I), 1),
    (re.compile(r"\bsecond\b|第二个|第2个", re.I), 2),
    (re.compile(r"\bthird\b|第三个|第3个", re.I), 3),
    (re.compile(r"\blast\b|\bprevious\b|上一个|刚才|最后一个|上个问题", re.I), -1),
)
EARLIER_NUMBER_ASK = (
    "you said", "you told me", "you gave me", "what number did you", "the number you",
    "numbers did you", "the numbers you", "did you just give", "you just gave",
    "your last answer", "your previous answer",
    "你刚才说", "你之前说", "你说的", "你给的", "你告诉我的", "刚才的数字", "之前的数字",
    "刚才给", "上一个回答", "上个回答",
)
# Data orecast does not have: key -> words that ask for it. Never answered with another number.
MISSING_TOPICS: dict[str, tuple[str, ...]] = {
    "port_inventory": ("港口库存", "港存", "库存", "port stock", "port inventor", "inventories",
                       "inventory", "stockpile"),
    "shipments": ("发运", "发货量", "出口量", "到港量", "shipment", "shipping volume", "exports of",
                  "export volume"),
    "freight": ("运费", "海运费", "航运", "freight", "bdi", "baltic dry", "shipping rate",
                "shipping cost"),
    # "进口矿价格" is the CFR China price the data has; the volume imported is what it lacks.
    "imports": ("进口量", "进口了多少", "进口多少", "进口数量", "进口总量", "进口数据", "imports",
                "import volume"),
    "mine_output": ("矿山产量", "铁矿石产量", "铁矿产量", "mine output", "mine production",
                    "iron ore production", "iron ore output"),
    "steel_output_recent": ("月度粗钢", "粗钢日产", "monthly steel output", "monthly crude steel"),
    "production_costs": ("生产成本", "开采成本", "现金成本", "完全成本", "矿山成本", "成本曲线",
                         "盈亏平衡", "production cost", "cash cost", "mining cost", "c1 cost",
                         "all-in cost", "cost curve", "breakeven", "break-even"),
    # The futures files hold volume and open interest, but no tool serves them: a price is no answer.
    "trading_volume": ("成交量", "交易量", "持仓量", "持仓", "trading volume", "traded volume", "volume of",
                       "volume traded", "futures volume", "open interest", "turnover"),
    "sgx_swaps": ("新加坡交易所", "新加坡铁矿", "新加坡掉期", "掉期", "sgx", "singapore", "iron ore swap"),
    "miners": ("淡水河谷", "力拓", "必和必拓", "福蒂斯丘", "英美资源", "vale", "rio tinto", "bhp",
               "fortescue", "fmg", "anglo american"),
    # Commodities with no series here: naming one must not fall back to the iron ore price.
    "lithium": ("lithium", "碳酸锂", "锂"),
    "gold": ("gold price", "price of gold", " gold ", " gold?", " gold.", "黄金", "金价"),
    "silver": ("silver", "白银", "银价"),
    "scrap": ("scrap", "废钢"),
    "manganese": ("manganese", "锰"),
    "cobalt": ("cobalt", "钴"),
    "grains": ("soybean", "wheat", "corn", "大豆", "小麦", "玉米"),
    "euro": ("欧元", "euros", "in euro", "eur/", "/eur"),  # no EUR rate: never a converted price
    # A local price in a market no series covers ("印度的铁矿石价格"): the China prices are not it.
    "local_market": ("印度的铁矿", "印度铁矿", "印度国内", "日本的铁矿", "韩国的铁矿", "欧洲的铁矿", "美国的铁矿",
                     "俄罗斯的铁矿", "in india", "indian iron ore", "india's iron ore", "in japan",
                     "in korea", "in europe", "european iron ore", "in the us", "in the united states",
                     "in russia", "nmdc", "国产矿", "国内矿", "铁精粉", "domestic ore", "domestic iron ore"),
    # "火星上的铁矿石价格": a place no market in the data is in; never the Earth price instead.
    # "铁矿石期货的涨停板是多少", "一手多少吨": exchange rules, which no series holds.
    "contract_rules": ("涨停", "跌停", "涨跌停", "停板", "保证金", "一手", "每手", "合约乘数", "交易单位",
                       "最小变动", "手续费", "交割规则", "limit up", "limit-up", "limit down", "price limit",
                       "margin requirement", "contract size", "lot size", "tick size", "trading hours", "交易时间"),
    # "澳元汇率多少": the only exchange rate here is USD/CNH.
    "other_fx": ("澳元", "日元", "英镑", "卢布", "雷亚尔", "韩元", "卢比", "aud", "jpy", "gbp", "brl",
                 "australian dollar", "japanese yen", "pound sterling", "brazilian real"),
    # "铁矿石期货均线", "RSI": technical indicators, which no tool computes.
    "technicals": ("均线", "移动平均", "macd", "rsi", "kdj", "布林", "bollinger", "moving average", "ma5", "ma10",
                   "ma20", "ma60", "技术指标", "technical indicator", "支撑位", "压力位", "阻力位", "support level",
                   "resistance level"),
    # "铁矿石期货的夏普比率": a risk-adjusted return needs a risk-free rate, which is not bundled.
    "risk_ratios": ("夏普", "sharpe", "sortino", "索提诺", "信息比率", "information ratio", "卡玛", "calmar"),
    # "铁矿石价格与美元指数的关系": the dollar index is not bundled (USD/CNH is).
    "dollar_index": ("美元指数", "dollar index", "dxy"),
    # "青岛港PB粉价格", "港口铁矿石价格": port spot prices of brands, which the data does not hold.
    "port_spot": ("港口现货", "港口价格", "港口铁矿石价格", "港口铁矿价格", "青岛港", "日照港", "曹妃甸", "pb粉",
                  "纽曼粉", "卡粉", "超特粉", "金布巴", "麦克粉", "巴混", "port price", "pb fines", "port spot",
                  "qingdao port"),
    # "62%和65%铁矿石价差": only the 62 % Fe benchmark is bundled.
    "other_grades": ("65%", "58%", "65品位", "58品位", "高品矿", "低品矿", "品位价差", "grade spread",
                     "65% fe", "58% fe"),
    # "推荐一只钢铁股": stock picks are advice on companies, which no series here measures.
    "stocks": ("股票", "个股", "钢铁股", "矿业股", "a股", "港股", "美股", "炒股", "买什么股", "哪只股",
               "stock pick", "stock tip", "which stock", "steel stocks", "mining stocks", "stocks should", "stocks to buy", "buy stock", "equities", "shares of",
               "share price"),
    "off_earth": ("火星", "月球", "月亮上", "金星", "木星", "土星", "外太空", "太空中", "太空里", "小行星",
                  "外星", "其他星球", "别的星球", "on mars", "mars'", "mars?", "mars.", "martian",
                  "on the moon", "the moon's", "lunar surface", "on venus", "on jupiter", "on saturn",
                  "asteroid", "outer space", "in space", "off earth", "another planet", "other planets"),
}
NAME_ASK = (
    "我叫什么", "我的名字是什么", "我是谁", "记得我的名字", "what is my name", "what's my name",
    "whats my name", "who am i", "do you remember my name", "remember my name",
)
PAST_ASK = (
    "what did i ask", "what have i asked", "my previous question", "my last question",
    "what was my question", "earlier question", "我之前问", "我刚才问", "我上一个问题", "我问过什么",
    "之前问了什么", "上一个问题", "我问了什么",
)
FOLLOW_UP = (
    "and for", "what about", "how about", "and with", "same for", "and in", "and over", "and the",
    "那", "呢", "换成", "改成", "再看", "同样", "switch to", "change to",
)

# "and coking coal?", "also rebar": a question opening with a conjunction continues the one before.
_AND_THEN = re.compile(r"\s*(?:and|also|or|plus)\b(?!\s+(?:then|if)\b)")

_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "十": 10, "半": 0}
_EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1}


def cn_number(text: str) -> int | None:
    """'6' / '六' / '十二' / '二十' → int."""
    if text.isdigit():
        return int(text)
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    if not text or any(c not in _CN_DIGITS for c in text):
        return None
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)
    return _CN_DIGITS[text]


_NUM = r"(\d+|[一二两三四五六七八九十]+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an?)"
_HORIZON = (
    (re.compile(_NUM + r"\s*-?\s*(months?|mos?)\b", re.I), "month"),
    (re.compile(_NUM + r"\s*个?\s*月"), "month"),
    (re.compile(_NUM + r"\s*-?\s*(weeks?|wks?)\b", re.I), "week"),
    (re.compile(_NUM + r"\s*个?\s*(?:星期|周)"), "week"),
    (re.compile(_NUM + r"\s*-?\s*(?:trading\s+)?(days?)\b", re.I), "day"),
    (re.compile(_NUM + r"\s*个?\s*(?:交易日|天|日)"), "day"),
    (re.compile(_NUM + r"\s*-?\s*(years?)\b", re.I), "year"),
    (re.compile(_NUM + r"\s*年(?!\d|份|初|底|末|以来)"), "year"),
)
_NAMED_HORIZON = (
    (re.compile(r"一年后", re.I), (12, "month")),
    (re.compile(r"半年"), (6, "month")),
)
# Words of a calendar period that would read as a horizon: "上半年" is not "半年" (6 months ahead)
# and "2024年3月" not "3月" (3 months).
_DATED_WORDS = re.compile(r"[上下]半年|\d{4}\s*年\s*(?:1[0-2]|0?[1-9])\s*月")


@dataclass(slots=True)
class Query:
    """What one user message asks, as far as words tell."""

    text: str
    zh: bool
    intents: list[str] = field(default_factory=list)
    series: list[str] = field(default_factory=list)
    method: str | None = None
    horizon: tuple[int, str] | None = None  # (n, "month" | "week" | "day" | "year")
    start: str | None = None
    end: str | None = None
    last_period: tuple[int, str] | None = None  # "past 3 years" → (3, "year"), resolved on data
    product: str | None = None  # for margins: "rebar" or "hrc"
    name: str | None = None  # "我叫赵六" → 赵六
    role: str | None = None  # "I am a steel trader" → steel trader
    asks_name: bool = False
    asks_role: bool = False
    asks_past: bool = False
    asks_earlier_number: bool = False
    remember: str | None = None  # a note to keep across conversations (/memories/)
    asks_memory: bool = False  # "what do you remember about me?"
    ordinal: int | None = None  # which earlier question (1 = first, -1 = last)
    follow_up: bool = False
    relative: tuple[str, int] | None = None  # "去年" → ("year", -1), "YTD" → ("year", 0)
    ago: tuple[int, str] | None = None  # "一年前", "3 months ago" → (1, "year"): a day that long before today
    ago_words: str = ""  # the words that said it ("一年前"), for the answer to name the day by
    missing: list[str] = field(default_factory=list)  # MISSING_TOPICS asked about
    scenario: tuple[str, float] | None = None  # (driver, shock) of "if X falls 5%"
    # (driver, level, "CNY" | "USD" | None) of "if rebar falls to 3000 元/吨"; driver "iron_ore"
    # is resolved to the World Bank or the DCE series by the currency (planner).
    scenario_level: tuple[str, float, str | None] | None = None
    # "up" | "down" | None: the way the level's verb says the price moves ("涨到" up, "跌破" down),
    # checked against the latest value: "涨到 700" when the price is 707 is a fall, and said so.
    level_direction: str | None = None
    # (level, "CNY" | "USD" | None) of "铁矿石会涨到800元吗", "chance it falls below 600 CNY/t":
    # a price target asked about, answered from a forecast's bands, never as a price put forward.
    target_level: tuple[float, str | None] | None = None
    scenario_unsupported: str | None = None  # a shock no bundled series measures
    tomorrow: bool = False  # "明天的价格": a day no data can hold yet
    bad_date: str | None = None  # "2030-02-30": a day no calendar has
    unknown: str | None = None  # "the price of unobtainium": a subject no series measures
    asks_why: bool = False  # "为什么？": causes, which price data cannot show
    bad_horizon: str | None = None  # "next -3 months": no forecast runs backwards
    bad_method: str | None = None  # "with method xyz": a method that does not exist
    claim: tuple[float, str] | None = None  # "是不是10000元？": a price the user puts forward
    claims: list[tuple[float, str]] = field(default_factory=list)  # every one ("700元还是100美元")
    holiday: str | None = None  # "国庆节期间的价格": a holiday the exchanges close for (English name)
    asks_average: bool = False  # "2027年平均价格": the mean over the period (of a forecast, if ahead)
    asks_band_why: bool = False  # "为什么预测区间这么宽": the model's own numbers, not market causes
    day_word: str | None = None  # "上周五", "yesterday": a day counted from today (start = end = it)
    christmas: bool = False  # "圣诞节2024年": 25 December (a holiday abroad, not at DCE/SHFE)
    asks_today: bool = False  # "今天是几号": the date itself, not a price
    threshold: tuple[float, str, str | None] | None = None  # "50美元以下的时候是哪些年": (level, "below"|"above", currency)
    annualised: bool = False  # "过去10年平均每年涨多少", "年化收益率": the compound change per year
    high_low: bool = False  # "今年的最高点和最低点差了多少": the range between them
    level_state: str | None = None  # "高于100美元的概率", "above 100": "above" | "below", a state, not a move
    certainty: str | None = None  # "一定会涨吧", "多大把握会跌": "up" | "down", answered with a probability
    month_assumed: str = ""  # "8月的均价" with no year: the month taken ("2026-08"), said in the answer
    year_assumed: bool = False  # "三季度呢", "2月呢": a period named without its year, the year taken here
    will_go: bool = False  # "下半年会怎样": what a period not yet over will bring, its history then a forecast
    part_assumed: str = ""  # "一季度螺纹钢均价": the words of that part of a year ("一季度"), said in the answer
    whole_year: bool = False  # "今年全年会涨还是跌": the year's end against the level it started from
    advice: bool = False  # "现在适合买入吗": no trading advice, the statistics instead
    pct_move: float | None = None  # "铁矿石涨10%是多少钱": the latest value moved by that %
    holiday_edge: tuple[str, str] | None = None  # "春节前最后一个交易日": (holiday, "before" | "after")
    periods: list[tuple[str, str]] = field(default_factory=list)  # "2024年四季度和2025年四季度": compared
    points_asked: float | None = None  # "跌了10个点是什么意思": what a point is, for a price
    streak: bool = False  # "PMI连续几个月低于50": the run at the end of the data
    moves: str | None = None  # "2025年最大的单日涨幅": "rises" | "falls" | "both" (largest one-period moves)


def _contains(low: str, words: tuple[str, ...]) -> bool:
    for w in words:
        if re.search(r"[\u4e00-\u9fff]", w) or not w.strip().isalnum():
            if w in low:
                return True
        elif re.search(rf"(?<![a-z]){re.escape(w)}", low):
            return True
    return False


# After "N 年 / N months": the day that long before today ("一年前", "3 months ago"), not a horizon.
_AGO = re.compile(r"\s*(?:以前|之前|前|ago\b)")


def _ago(text: str) -> tuple[tuple[int, str], str] | None:
    """((n, unit), the words) of "一年前", "三个月以前", "半年前", "two weeks ago"; None when the text
    has none."""
    low = text.lower()
    if m := re.search(r"半年(?:以|之)?前|half a year ago", low):
        return (6, "month"), m.group(0)
    for rx, unit in _HORIZON:
        for m in rx.finditer(low):
            n = cn_number(m.group(1))
            if n is not None and 0 < n and not (unit == "year" and n >= 1000) and (ago := _AGO.match(low, m.end())):
                return (n, unit), low[m.start(): ago.end()].strip()
    return None


def _horizon(text: str) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
    """(forecast horizon, look-back period). 'past/last/过去/近 N …' is a look-back, not a horizon,
    and 'N … 前 / ago' neither (`_ago`)."""
    low = text.lower()
    horizon = lookback = None
    for rx, unit in _HORIZON:
        for m in rx.finditer(low):
            n = cn_number(m.group(1))
            if n is None or n <= 0 or (unit == "year" and n >= 1000) or _AGO.match(low, m.end()):
                continue  # ("2021年" is a date)
            before = low[max(0, m.start() - 8) : m.start()]
            if re.search(r"(past|last|previous|过去|近|最近|(?<!提)前)\s*(the\s*)?$", before):
                lookback = lookback or (n, unit)
            elif re.search(r"\d{4}\s*$", before) and unit == "year":
                continue
            else:
                horizon = horizon or (n, unit)
    if horizon is None:
        for rx, value in _NAMED_HORIZON:
            if (m := rx.search(low)) and not _AGO.match(low, m.end()):
                horizon = value
                break
    if lookback is None:
        if re.search(r"past year|过去一年|近一年|最近一年|last 12 months|past 12 months|52[- ]?week|52周|52 周|"
                     r"(?:over|in|during|for|within) the last year", low):
            lookback = (1, "year")
        elif re.search(r"(past|last|previous) week|过去一周|近一周|最近一周|过去一个星期", low):
            lookback = (1, "week")  # "in the last week": the data's last week, like "past 3 months"
        elif re.search(r"past month|过去一月|近一月", low):
            lookback = (1, "month")
        elif re.search(r"(?:过去|近|最近)\s*半年", low):
            lookback, horizon = (6, "month"), None  # "过去半年涨了多少": six months back, not ahead
    return horizon, lookback


_DATE = re.compile(r"(\d{4})(?:[-/.年](\d{1,2})(?:[-/.月](\d{1,2})日?)?月?)?")


_ORDINAL_PART = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
                 "4th": 4, "一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4,
                 "上": 1, "下": 2}
# Quarters and halves of a year: (pattern, months per part, group of the part, group of the year).
_PART_OF_YEAR = (
    (re.compile(r"\bq([1-4])\s*[-/ ]?\s*(\d{4})", re.I), 3, 1, 2),
    (re.compile(r"(\d{4})\s*[-/ ]?\s*q([1-4])\b", re.I), 3, 2, 1),
    (re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+)?(\d{4})", re.I),
     3, 1, 2),
    (re.compile(r"(\d{4})\s*年?\s*第?([一二三四1-4])\s*季度"), 3, 2, 1),
    (re.compile(r"\b(first|second|1st|2nd)\s+half\s+(?:of\s+)?(\d{4})", re.I), 6, 1, 2),
    (re.compile(r"\bh([12])\s*[-/ ]?\s*(\d{4})", re.I), 6, 1, 2),
    (re.compile(r"(\d{4})\s*[-/ ]?\s*h([12])\b", re.I), 6, 2, 1),
    (re.compile(r"(\d{4})\s*年?\s*(上|下)半年"), 6, 2, 1),
)


_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_EN_MONTH = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+(\d{4})\b", re.I)


_EN_DAY = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+"
                     r"(\d{4})\b|\b(\d{1,2})(?:st|nd|rd|th)?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+"
                     r"(\d{4})\b", re.I)


def _parts_of_year(text: str) -> list[tuple[int, int, str, str]]:
    """'Q1 2024', 'first quarter of 2024', '2024年一季度', '2024年上半年', 'March 2024', 'May 5, 2025'
    → (pos, end, first month, last month) (a day's ISO date for both, for a day)."""
    out = []
    for m in _EN_DAY.finditer(text):
        name, day, year = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(4), m.group(6))
        month = _MONTH_NAMES.index(name.lower()) + 1
        if not _invalid_day(int(year), month, int(day)):
            iso = f"{int(year):04d}-{month:02d}-{int(day):02d}"
            out.append((m.start(), m.end(), iso, iso))
    days = [(a, b) for a, b, _, _ in out]
    for m in _EN_MONTH.finditer(text):
        if any(a <= m.start() < b for a, b in days):
            continue
        month = f"{int(m.group(2)):04d}-{_MONTH_NAMES.index(m.group(1).lower()) + 1:02d}"
        out.append((m.start(), m.end(), month, month))
    for rx, months, part_group, year_group in _PART_OF_YEAR:
        for m in rx.finditer(text):
            part, year = _ORDINAL_PART[m.group(part_group).lower()], int(m.group(year_group))
            first = (part - 1) * months + 1
            out.append((m.start(), m.end(), f"{year:04d}-{first:02d}",
                        f"{year:04d}-{first + months - 1:02d}"))
    return out


def _dates(text: str) -> tuple[str | None, str | None]:
    """Explicit dates: 'from 2020 to 2022', '2021-03', '2024年', 'since 2019', '2020-2022',
    and quarters or halves of a year ('Q1 2024', '2024年上半年')."""
    # "2026年1月到6月": the year written once stands for both months.
    text = re.sub(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(到|至|~|～|-|—)\s*(\d{1,2})\s*月",
                  lambda m: f"{m[1]}年{m[2]}月{m[3]}{m[1]}年{m[4]}月", text)
    parts = _parts_of_year(text)
    located: list[tuple[int, str, str]] = [(pos, a, b) for pos, _, a, b in parts]
    for m in _DATE.finditer(text):
        if any(lo <= m.start() < hi for lo, hi, _, _ in parts):
            continue  # the year of a quarter already read
        bounds = _date_bounds(m)
        if bounds is not None:
            located.append((m.start(), *bounds))
    found = [(a, b) for _, a, b in sorted(located)]
    return _range_of(found, text)


_ZH_MONTH = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
             "十一": 11, "十二": 12}
_YEAR_SHIFTS = {"去年": -1, "上一年": -1, "上年": -1, "今年": 0, "本年": 0, "明年": 1, "下一年": 1}
_YEAR_WORD = re.compile(r"(去年|上一年|上年|今年|本年|明年|下一年)(?:的)?\s*"
                        r"(?=(?:\d{1,2}|十[一二]?|[一二三四五六七八九])月|第?[一二三四1-4]季度|[上下]半年|q[1-4])",
                        re.I)


def _year_named(text: str, shift: int) -> str | None:
    """"去年12月…" → "2025年12月…" (today's year plus `shift`); None without a part of that year."""
    from orecast.agent.clock import today

    if not _YEAR_WORD.search(text):
        return None
    out = _YEAR_WORD.sub(lambda m: f"{today().year + _YEAR_SHIFTS.get(m.group(1), shift)}年", text)
    # "去年十二月": a month in Chinese numerals, written as digits so the date reader finds it.
    return re.sub(r"年(十[一二]?|[一二三四五六七八九])月", lambda m: f"年{_ZH_MONTH[m.group(1)]}月", out)


# "9月份", "九月", "9月28日", "in September": a month (or a day) with no year; not "9个月" (a
# horizon), "1-9月", "3月以来", "8月底" (spans, parts), nor a month after a year ("2026年9月",
# "今年9月": read above).
_BARE_MONTH = re.compile(
    r"(?<![\d年个十\-~至到])(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月份?(?:(\d{1,2})[日号])?"
    r"(?!\s*(?:后|内|以内|以后|之后|之内|以来|至今|底|初|末|到|至|-|~))")
# Around a bare month: a horizon ("未来3月") or the calendar month in general ("1月通常涨吗", the
# seasonality), not one month.
_NOT_ONE_MONTH = re.compile(r"未来|接下来|今后|过去|最近|近\s*$|通常|一般|往往|历年|每年|容易|usually|typically|"
                            r"normally|\btend", re.I)
_EN_BARE_MONTH = re.compile(
    r"\b(?:in|during|for|of|last)\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b(?!\.?,?\s*\d)", re.I)
_EN_BARE_DAY = re.compile(  # "on March 18", "March 18th": no year after it
    r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
    r"(\d{1,2})(?:st|nd|rd|th)?\b(?!,?\s*\d{4})(?!\s*(?:%|percent|months?|weeks?|days?|years?))")
_FUTURE_WORDS = re.compile(r"会|将|预测|预计|展望|forecast|predict|will|expect", re.I)


# "8月底", "3月初", "2025年10月中旬": days of a month (上旬 1-10, 中旬 11-20, 下旬 and 月底 21 to its end).
_MONTH_PART = re.compile(r"(?:(\d{4})\s*年\s*)?(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月份?\s*"
                         r"(月初|月底|月末|上旬|中旬|下旬|初|底|末)")
_PART_DAYS = {"月初": (1, 10), "初": (1, 10), "上旬": (1, 10), "中旬": (11, 20), "下旬": (21, 31),
              "月底": (21, 31), "底": (21, 31), "月末": (21, 31), "末": (21, 31)}


def _year_of_month(month: int, text: str) -> int:
    """The year of a month named without one: the latest such month up to this one, or, when the
    question asks ahead ("会", "forecast"), the next one from this month on."""
    from orecast.agent.clock import today

    now = today()
    if _FUTURE_WORDS.search(text):
        return now.year + (1 if month < now.month else 0)
    return now.year - (1 if month > now.month else 0)


def part_of_month(text: str) -> tuple[str, str, bool] | None:
    """"8月底铁矿石价格" → ("2026-08-21", "2026-08-31", True) on 2026-12-07: the days of that part of
    the month (of the latest such month up to today when no year is said, the last bool)."""
    from orecast.agent.clock import today

    m = _MONTH_PART.search(text)
    if m is None or re.search(r"以来|至今|到|至", text[m.end():m.end() + 3]):
        return None
    month = int(m.group(2)) if m.group(2).isdigit() else _ZH_MONTH[m.group(2)]
    named = re.search(r"(去年|上一年|上年|今年|本年|明年|下一年)(?:的)?\s*$", text[: m.start()])
    if m.group(1):
        year, assumed = int(m.group(1)), False
    elif named:
        year, assumed = today().year + _YEAR_SHIFTS[named.group(1)], False
    else:
        year, assumed = _year_of_month(month, text), True
    first, last = _PART_DAYS[m.group(3)]
    last = min(last, calendar.monthrange(year, month)[1])
    return f"{year:04d}-{month:02d}-{first:02d}", f"{year:04d}-{month:02d}-{last:02d}", assumed


def month_without_year(text: str) -> str | None:
    """"铁矿石9月份价格" on 2026-12-07 → "2026-09": the latest such month up to this one, or, asked
    about the future ("9月份会涨吗"), the next one from this month on. A day too ("9月28日",
    "on March 18"; "may" is a month only as "May")."""

    if m := _BARE_MONTH.search(text):
        if _NOT_ONE_MONTH.search(text[: m.start()] + "|" + text[m.end():m.end() + 6]):
            return None
        word, day = m.group(1), m.group(2)
        month = int(word) if word.isdigit() else _ZH_MONTH[word]
    elif m := _EN_BARE_DAY.search(text):
        month, day = _MONTH_NAMES.index(m.group(1).lower()) + 1, m.group(2)
    elif m := _EN_BARE_MONTH.search(text):
        month, day = _MONTH_NAMES.index(m.group(1).lower()) + 1, None
    else:
        return None
    year = _year_of_month(month, text)
    if day is None:
        return f"{year:04d}-{month:02d}"
    return None if _invalid_day(year, month, int(day)) else f"{year:04d}-{month:02d}-{int(day):02d}"


# "三季度", "下半年", "Q3", "the second half": a part of a year named without the year (one with a
# year, "2025年三季度", "Q3 2025", is read by `_dates`).
_BARE_PART = (
    (re.compile(r"(?<![\d年])第?([一二三四1-4])\s*季度"), 3),
    (re.compile(r"(?<![\d年])([上下])半年"), 6),
    (re.compile(r"(?<![a-z\d])q([1-4])(?![a-z\d])(?!\s*[-/]?\s*\d{4})", re.I), 3),  # "Q1铁矿石" too
    (re.compile(r"(?<![a-z\d])h([12])(?![a-z\d])(?!\s*[-/]?\s*\d{4})", re.I), 6),
    (re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\b(?!\s+(?:of\s+)?\d{4})", re.I), 3),
    (re.compile(r"\b(first|second|1st|2nd)\s+half\b(?!\s+(?:of\s+)?\d{4})", re.I), 6),
)


def part_without_year(text: str, shift: int | None = None, ahead: bool = False) -> tuple[str, str, str] | None:
    """"三季度呢" on 2026-12-07 → ("2026-07", "2026-09", "三季度"): the latest such part begun by
    today, or, asked about the future ("下半年会涨吗"), the next one not yet over; and its words.
    `shift` years from this one when a year word names it ("last year's second half"); `ahead`: asked
    about the future without saying so ("一季度呢" after a forecast)."""
    from orecast.agent.clock import today

    for rx, months in _BARE_PART:
        if (m := rx.search(text)) is None or _NOT_ONE_MONTH.search(text[: m.start()] + "|" + text[m.end():m.end() + 6]):
            continue
        first = (_ORDINAL_PART[m.group(1).lower()] - 1) * months + 1
        now = today()
        if shift is not None:
            year = now.year + shift
        elif ahead or _FUTURE_WORDS.search(text):
            year = now.year + (1 if first + months - 1 < now.month else 0)
        else:
            year = now.year - (1 if first > now.month else 0)
        return f"{year:04d}-{first:02d}", f"{year:04d}-{first + months - 1:02d}", m.group(0)
    return None


def _date_bounds(m: re.Match[str]) -> tuple[str, str] | None:
    """(start-of-period, end-of-period) of one explicit date, None if it is not a date."""
    year = int(m.group(1))
    # An old year is a year only when written as one ("1900年", "in 1900"), not "1900 元".
    said_year = m.string[m.end(1):m.end(1) + 1] == "年" or bool(
        re.search(r"\b(?:in|year|since|from|before)\s+$", m.string[:m.start()], re.I))
    if not (1960 <= year <= 2100 or (1800 <= year < 1960 and said_year)):
        return None
    month, day = m.group(2), m.group(3)
    if month and not 1 <= int(month) <= 12:
        month, day = None, None
    if month and day and _invalid_day(year, int(month), int(day)):
        return None
    if month and day:
        iso = f"{year:04d}-{int(month):02d}-{int(day):02d}"
        return iso, iso
    if month:
        return f"{year:04d}-{int(month):02d}", f"{year:04d}-{int(month):02d}"
    return f"{year:04d}", f"{year:04d}"


def _invalid_day(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return True
    return False


def bad_date(text: str) -> str | None:
    """A day that no calendar has ("2030年2月30日", "2025-04-31") or a month no year has ("2026年13月",
    "2026-13-45"), as the user wrote it."""
    for m in _DATE.finditer(text):
        month, day = m.group(2), m.group(3)
        if month and not 1 <= int(month) <= 12:
            return f"{int(m.group(1)):04d}-{int(month):02d}" + (f"-{int(day):02d}" if day else "")
        if month and day and _invalid_day(int(m.group(1)), int(month), int(day)):
            return f"{int(m.group(1)):04d}-{int(month):02d}-{int(day):02d}"
    return None


# "the price of unobtainium", "香蕉的价格": a subject named that may be no series at all.
_SUBJECT_EN = re.compile(r"\b(?:price|prices|cost)\s+of\s+(?:the\s+|a\s+)?([a-z][a-z\- ]{1,30}?)"
                         r"(?=\s*(?:[?.!,]|$|\bnow\b|\btoday\b|\bin\b|\bon\b|\bper\b))", re.I)
_SUBJECT_ZH = re.compile(r"([\u4e00-\u9fffA-Za-z]{1,8})的(?:价格|价钱|售价)")
# "比特币价格", "bitcoin price": a subject right before the word, with no 的 / of.
_SUBJECT_ZH_BARE = re.compile(r"([\u4e00-\u9fff]{2,6})(?:价格|价钱|售价|现价|报价)")
_SUBJECT_EN_BARE = re.compile(r"\b([a-z][a-z\-]{2,20})\s+prices?\b", re.I)
_EN_NOT_A_SUBJECT = {
    "latest", "current", "average", "mean", "spot", "futures", "future", "lowest", "highest", "max",
    "min", "closing", "settlement", "settle", "market", "ore", "steel", "commodity", "commodities",
    "recent", "last", "previous", "first", "target", "expected", "historical", "real", "nominal",
    "the", "its", "their", "your", "this", "that", "which", "what", "our", "my", "monthly", "daily",
    "annual", "yearly", "today", "today's", "tomorrow's", "benchmark", "contract", "fines", "cfr",
    "import", "imported", "seaborne", "port", "forecast", "predicted", "median", "peak", "low",
    "high", "record", "same", "whose", "any", "world", "bank", "dce", "shfe", "china", "chinese",
}
_GENERIC_SUBJECTS = re.compile(
    r"^(?:it|this|that|them|these|iron ore|ore|iron|steel|futures?|commodit(?:y|ies)|"
    r"现在|目前|今天|明天|当前|最新|它|这个|那个|今年|去年|明年|上个月|下个月|本月|未来|历史|同期|期货|现货|"
    r"国内|国际|中国|全球|铁矿|铁矿石|矿石|钢材|钢铁|大宗商品|进口矿|进口铁矿|外矿|港口|现货|期货|"
    r"平均|均价|结算|收盘|开盘|最高|最低|历史|预测|合约|主力|连续|人民币|美元|计价|以人民币|用人民币|"
    r"用美元|以美元|这个月|上月|本月|近期|同期价|什么|多少|哪个|哪些)$", re.I)


def unknown_subject(text: str, known: set[str] | None) -> str | None:
    """The thing whose price is asked, when no bundled series or known word names it."""
    for rx in (_SUBJECT_EN, _SUBJECT_ZH, _SUBJECT_ZH_BARE, _SUBJECT_EN_BARE):
        m = rx.search(text)
        if m is None:
            continue
        subject = m.group(1).strip()
        if rx is _SUBJECT_EN_BARE and subject.lower() in _EN_NOT_A_SUBJECT:
            continue
        if rx is _SUBJECT_ZH_BARE:
            subject = re.sub(r"^(?:现在|目前|今天|当前|最新|请问|告诉我|查一下|查询|的)+", "", subject)
            if len(subject) < 2:
                continue
        if (_GENERIC_SUBJECTS.match(subject) or find_series(subject, known)
                or re.search(r"\d|年|月|日|天|周", subject)):
            return None
        return subject
    return None


_COMPARE_PERIODS = re.compile(r"比较|对比|相比|比一比|哪个|哪一年|哪年|(?:和|与|跟).{1,24}比(?!例|价)|更高|更低|\bcompare|\bvs\.?\b|versus|than\b", re.I)
_RANGE_WORDS = re.compile(r"到|至|以来|之间|期间|from\b|\bto\b|between|through|until|since|[-–—~](?!\d{2}\b)", re.I)


_BARE_QUARTER = re.compile(r"(?<![\d年])第?([一二三四1-4])\s*季度")
_LONE_YEAR = re.compile(r"(\d{4})(?!\d|\s*年?\s*第?[一二三四1-4]\s*季度)\s*年?")


def _one_year_for_both(text: str) -> str:
    """"一季度和二季度比较（2026年）", "2026年一季度和二季度": two quarters and one year written once;
    the year is written before each quarter, as if the user had typed it twice."""
    quarters = list(_BARE_QUARTER.finditer(text))
    years = {m.group(1) for m in re.finditer(r"(\d{4})", text)}
    if not quarters or len(years) != 1 or len(re.findall(r"季度", text)) != 2:
        return text
    year = years.pop()
    text = _LONE_YEAR.sub(" ", text)  # the year said apart from the quarters
    return _BARE_QUARTER.sub(lambda m: f"{year}年{m.group(0)}", text)


def compared_periods(text: str) -> list[tuple[str, str]]:
    """"2024年四季度和2025年四季度均价比较", "2023年和2024年哪年均价高": two periods of the same kind set
    side by side (not one range from the first to the second)."""
    # "in 2024 compared with 2023" joins its two periods with "compared with" alone.
    if not _COMPARE_PERIODS.search(text) or not re.search(
            r"和|与|跟|及|\band\b|\bvs|versus|than|对比|比|\bcompared? (?:with|to)\b|\bagainst\b", text, re.I):
        return []
    text = _one_year_for_both(text)
    parts = _parts_of_year(text)
    located = [(pos, a, b) for pos, _, a, b in parts]
    for m in _DATE.finditer(text):
        if not any(lo <= m.start() < hi for lo, hi, _, _ in parts) and (bounds := _date_bounds(m)):
            located.append((m.start(), *bounds))
    located.sort()
    if len(located) != 2:
        return []
    (p1, a1, b1), (p2, a2, b2) = located
    between = text[p1:p2]
    if len(a1) != len(a2) or (a1 == a2 and b1 == b2) or re.search(r"到|至|~|从", between):
        return []
    return sorted([(a1, b1), (a2, b2)])  # earlier first: "后者比前者" then reads forward in time


def _range_of(found: list[tuple[str, str]], text: str) -> tuple[str | None, str | None]:
    if not found:
        return None, None
    low = text.lower()
    if len(found) >= 2 and found[0][0] > found[-1][1]:
        found = [found[-1], *found[1:-1], found[0]]  # "2025年12月和2025年11月": earliest first
    if len(found) == 1:
        if re.search(r"since|from|after|以来|之后|起|开始", low):
            return found[0][0], None
        if re.search(r"until|before|up to|截至|之前|以前", low):
            return None, found[0][1]
        return found[0]
    return found[0][0], found[-1][1]


_RELATIVE = (
    # "over the last year" is the past 12 months (a look-back), not the calendar year before.
    (re.compile(r"去年|上一年|上年|(?<!over the )(?<!in the )(?<!during the )(?<!for the )(?<!within the )"
                r"last year|previous year|prior year", re.I), ("year", -1)),
    (re.compile(r"(?<![\d个几一二三四五六七八九十年])前年|the year before last", re.I), ("year", -2)),
    (re.compile(r"明年|下一年|next year", re.I), ("year", 1)),  # a calendar year, forecast whole
    # "比年初跌了多少", "since the start of the year": this year so far ("2025年初", "明年年初" are not).
    (re.compile(r"今年|本年|(?<![年\d])年初|this year|year[- ]to[- ]date|\bytd\b|"
                r"since the (?:start|beginning) of (?:the|this) year", re.I),
     ("year", 0)),
    (re.compile(r"上个?季度|上一季度|last quarter|previous quarter", re.I), ("quarter", -1)),
    (re.compile(r"本季度|这个季度|this quarter", re.I), ("quarter", 0)),
    (re.compile(r"上个月|上月|上一个月|last month|previous month", re.I), ("month", -1)),
    # "下个月" on 2026-12-07 is January, the calendar month after this one, not "the next month
    # from today" (that was December, this month); likewise next week and next quarter.
    (re.compile(r"下个月|下月|下一个月|next month", re.I), ("month", 1)),
    (re.compile(r"下个?季度|下一季度|next quarter", re.I), ("quarter", 1)),
    (re.compile(r"下周|下个?星期|下一周|next week", re.I), ("week", 1)),
    # "本周铁矿石期货涨了多少": this calendar week (Monday to today), not the data's last week.
    (re.compile(r"本周|这周|这个?星期|这一周|this week", re.I), ("week", 0)),
    (re.compile(r"上周|上个?星期|上一周|上礼拜", re.I), ("week", -1)),  # the calendar week before this one
    (re.compile(r"本月|这个月|this month", re.I), ("month", 0)),
)

# Scenario shocks: what moves (driver words), which way, by how much.
_IF = re.compile(r"如果|假如|假设|若|要是|万一|情景|\bif\b|\bsuppose\b|\bassume\b|\bscenario\b|"
                 r"what happens|what would happen", re.I)
_DRIVER_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # "钢厂减产10%": the mills' output is crude steel output (a cut by policy, "限产", has no size).
    ("steel_output", ("粗钢产量", "粗钢", "钢铁产量", "钢产量", "crude steel", "steel output",
                      "steel production", "钢厂减产", "钢厂产量", "钢铁减产", "钢厂增产", "mill output",
                      "steel mills cut", "mills cut")),
    ("pmi", ("pmi", "采购经理")),
    ("usd_cnh", ("人民币", "汇率", "usd/cnh", "cnh", "yuan", "renminbi", "rmb", "dollar", "美元")),
    ("coking_coal", ("焦煤", "coking coal", "met coal")),
    ("coke", ("焦炭", "coke")),
    ("rebar", ("螺纹", "rebar")),
    ("hrc", ("热卷", "hot-rolled", "hrc")),
    ("oil", ("原油", "油价", "oil", "brent")),
    ("iron_ore", ("铁矿石", "铁矿", "矿价", "iron ore", "iron-ore")),
)
_UNSUPPORTED_SHOCKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("port_inventory", ("库存", "inventor", "stockpile", "port stock")),
    ("shipments", ("发运", "发货", "出口", "shipment", "export")),
    ("freight", ("运费", "freight", "shipping rate")),
    ("interest_rate", ("利率", "降息", "加息", "interest rate", "rate cut", "rate hike")),
    ("property", ("房地产", "地产", "property", "housing")),
    ("policy", ("限产", "政策", "output cut", "policy", "curb")),
)
_DOWN = re.compile(r"下降|下跌|减少|降低|回落|跌|降|减|缩减|萎缩|贬值|fall|drop|declin|decreas|cut|"
                   r"lower|down|shrink|weaken|depreciat", re.I)
_UP = re.compile(r"上升|上涨|增加|提高|增长|涨|升|增|回升|升值|rise|rises|climb|increas|grow|"
                 r"higher|up\b|jump|strengthen|appreciat", re.I)
_SIZE = re.compile(r"([-+]?\d+(?:\.\d+)?)\s*(%|％|个百分点|百分点|percent|个点|点|points?|pts?)", re.I)


# "跌到3000元/吨", "falls to 80 USD/t", "PMI跌破48": a level the driver reaches, not a change.
_LEVEL = re.compile(
    r"(?:跌到|跌至|跌破|降到|降至|回落到|回落至|下跌到|下跌至|下降到|下降至|涨到|涨至|涨破|上涨到|上涨至|"
    r"升到|升至|上升到|上升至|突破|站上|达到|回到|变成|变为|贬值到|贬值至|升值到|升值至|会到|能到|到达|高于|低于|超过|"
    r"\b(?:is|be|stays?|remains?|ends?|closes?)\s+(?:above|below|over|under)\b|"
    r"\b(?:falls?|fell|drops?|dropped|declines?|slides?|sinks?|slumps?|crash(?:es)?|rises?|rose|"
    r"climbs?|jumps?|rallies|rebounds?|recovers?|goes|went|gets?|moves?|returns?|weakens?|"
    r"strengthens?)\s+(?:back\s+)?(?:to|below|under|above|over)\b|"
    r"\b(?:hits?|reach(?:es)?|touches|breaks?(?:\s+(?:below|above|through))?|(?:is|was|were)\s+at|"
    r"trades?\s+at)\b)"
    r"\s*(us\$|\$|¥|￥)?\s*(\d[\d,]*(?:\.\d+)?)\s*"
    r"(?!\d|%|％|个?百分点|个点|点|percent|pts?\b|points?|年|月|日|天|周|个月|years?|months?|days?)"
    r"(元|块|人民币|美元|美金|刀|yuan|cny|rmb|usd|dollars?|us\$|\$)?", re.I)


# The level's verb: which way the price must go to get there, if the verb says (达到 / reach do not).
_LEVEL_UP = re.compile(r"涨|升|突破|站上|升值|高于|超过|rise|rose|climb|jump|ralli|rebound|recover|strengthen|"
                       r"above|over|breaks?\s+(?:above|through)", re.I)
_LEVEL_DOWN = re.compile(r"跌|降|回落|贬值|低于|fall|fell|drop|declin|slide|sink|slump|crash|weaken|below|"
                         r"under", re.I)
# "铁矿石涨到700元会怎样": a consequence asked of a level is a scenario, as with 如果.
_CONSEQUENCE = re.compile(r"会怎样|会怎么样|会如何|会有什么影响|有什么影响|影响多大|then what", re.I)
# "会涨到800元吗", "什么时候能涨到1000元", "chance it falls below 600": a target asked about.
_ASKS_TARGET = re.compile(r"吗|么|会不会|能不能|能否|可不可能|有没有可能|可能|概率|几率|什么时候|何时|多久|"
                          r"\bwill\b|\bcould\b|\bcan\b|\bwhen\b|probabilit|chance|likel|odds|\?$|？$", re.I)


def level_direction(verb: str) -> str | None:
    """"涨到" → "up", "跌破" → "down", "达到" / "reaches" → None (no way said)."""
    if _LEVEL_DOWN.search(verb):
        return "down"
    if _LEVEL_UP.search(verb):
        return "up"
    return None


def _target_level(low: str) -> tuple[tuple[float, str | None], str | None] | None:
    """"铁矿石会涨到800元吗": (800, "CNY") and "up"; not a condition (如果…) nor a consequence."""
    if _IF.search(low) or _CONSEQUENCE.search(low) or _SIZE.search(low) or not _ASKS_TARGET.search(low):
        return None
    if re.search(r"几个|多少个|几次|多少次|多少天|哪些|哪几|how many|how often", low):
        return None  # "PMI在2025年有几个月高于50？" counts the past, it asks no target
    m = _LEVEL.search(low)
    if m is None:
        return None
    value = float(m.group(2).replace(",", ""))
    verb = low[m.start(): m.start(2)]
    if value <= 0 or re.search(r"\b(?:is|was|were)\s+at|trades?\s+at", verb):
        return None  # "is iron ore at 700 yuan?" puts a price forward: the claim check answers it
    return (value, _currency(m.group(1), m.group(3))), level_direction(verb)


def _currency(*marks: str | None) -> str | None:
    for mark in marks:
        if mark and re.fullmatch(r"元|块|人民币|yuan|cny|rmb|¥|￥", mark, re.I):
            return "CNY"
        if mark and re.fullmatch(r"美元|美金|刀|usd|dollars?|us\$|\$", mark, re.I):
            return "USD"
    return None


def _driver_before(low: str, at: int, *, strict: bool = False) -> str | None:
    """The driver named nearest before position `at` ("如果螺纹钢跌到3000，铁矿石…" → rebar),
    else (not `strict`) the first one named anywhere."""
    found = [(m.start(), key) for key, words in _DRIVER_WORDS for w in words
             for m in re.finditer(rf"(?<![a-z]){re.escape(w)}", low)]
    before = [f for f in found if f[0] < at]
    if before:
        return max(before)[1]
    return min(found)[1] if found and not strict else None


_IMPACT = re.compile(r"影响|冲击|\bimpact|\beffects?\b|\baffect", re.I)


def _scenario(text: str, low: str) -> tuple[tuple[str, float] | None, str | None]:
    if not _IF.search(low):
        if _IMPACT.search(low):  # "美联储加息对铁矿石有什么影响": a shock no series measures
            return None, next((k for k, words in _UNSUPPORTED_SHOCKS if any(w in low for w in words)), None)
        return None, None
    for key, words in _UNSUPPORTED_SHOCKS:
        if any(w in low for w in words):  # "if the property market collapses": no size needed
            return None, key
    size = _SIZE.search(low)
    if size is None:
        return None, None
    driver = _driver_before(low, size.start())
    if driver is None:
        return None, "unknown"
    value = abs(float(size.group(1)))
    # The direction word nearest to the number wins ("steel output falls 5%", "下降5%").
    lo = max(0, size.start() - 16)
    window = low[lo: size.end() + 8]
    at = size.start() - lo
    moves = [(abs(m.start() - at), -1.0) for m in _DOWN.finditer(window)]
    moves += [(abs(m.start() - at), 1.0) for m in _UP.finditer(window)]
    sign = -1.0 if size.group(1).startswith("-") else (min(moves)[1] if moves else 1.0)
    if driver == "usd_cnh" and re.search(r"人民币|yuan|renminbi|rmb|cnh\b", low) and not re.search(
        r"美元兑|usd/cnh|dollar", low
    ):
        sign = -sign  # "人民币贬值 3%" is USD/CNH up 3 %
    return (driver, sign * value), None


def _scenario_level(low: str) -> tuple[str, float, str | None] | None:
    """"If rebar falls to 3000 CNY/t": (driver, 3000, "CNY"); a change in % or points is not one."""
    if not (_IF.search(low) or _CONSEQUENCE.search(low)) or _SIZE.search(low):
        return None
    m = _LEVEL.search(low)
    if m is None:
        return None
    # "如果它跌到2900元，铁矿石会怎样": a series named only after the level is the target; the driver
    # is then the one talked about before ("" here, the planner reads it from the conversation).
    driver = _driver_before(low, m.start(), strict=True) or ""
    value = float(m.group(2).replace(",", ""))
    if value <= 0:
        return None
    return driver, value, _currency(m.group(1), m.group(3))


# "铁矿石价格是不是10000元？", "say the price is 1000 dollars": a price put forward, checked against the data.
_CLAIM = re.compile(r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)\s*(元|块|yuan|cny|rmb|美元|dollars?|usd|\$)")


_METHOD_NAMED = (re.compile(r"\bmethod\s+(?:called\s+|named\s+)?([a-z][a-z0-9_-]*)"),
                 re.compile(r"\b([a-z][a-z0-9_-]*)\s+method\b"),
                 re.compile(r"用\s*([a-z][a-z0-9_-]*)\s*(?:方法|法|模型)"))
_NOT_A_NAME = {"the", "a", "an", "which", "this", "that", "best", "each", "every", "forecasting",
               "forecast", "any", "your", "what", "one", "same", "other", "another", "with", "by",
               "of", "for", "and", "or", "is", "are", "most", "accurate", "good", "better", "new"}


def _unknown_method(low: str) -> str | None:
    """"with method xyz": a word named as the method that is no method (known ones parse first)."""
    for rx in _METHOD_NAMED:
        m = rx.search(low)
        if m and m.group(1) not in _NOT_A_NAME:
            return m.group(1)
    return None


# "国庆节期间铁矿石期货价格": the exchanges are closed then. Not "节后" / "after the holiday".
_HOLIDAYS = (
    ("National Day", ("国庆", "十一黄金周", "十一长假", "national day", "golden week")),
    ("Spring Festival", ("春节", "过年", "除夕", "spring festival", "chinese new year", "lunar new year")),
    ("Mid-autumn Festival", ("中秋", "mid-autumn", "mid autumn")),
    ("Labour Day", ("劳动节", "五一", "labour day", "labor day", "may day")),
    ("Dragon Boat Festival", ("端午", "dragon boat")),
    ("Tomb-sweeping Day", ("清明", "qingming", "tomb-sweeping")),
    ("New Year's Day", ("元旦", "new year's day")),
)
_AROUND = re.compile(r"节前|节后|之前|之后|以前|以后|前后|前夕|前一|后一|假期前|假期后|\bbefore\b|\bafter\b|"
                     r"leading up|\bahead of\b|\baround\b", re.I)


def _holiday_edge(low: str) -> tuple[str, str] | None:
    """"春节前最后一个交易日", "国庆节后第一个交易日", "before Golden Week": the trading day next to a
    holiday's closure (not the holiday's own days, which have no price)."""
    name = next((n for n, words in _HOLIDAYS if any(w in low for w in words)), None)
    if name is None:
        return None
    if re.search(r"节后|假期后|之后|以后|后第一|后的第一|\bafter\b", low):
        return name, "after"
    if re.search(r"节前|假期前|之前|以前|前最后|前的最后|前夕|\bbefore\b|ahead of|leading up", low):
        return name, "before"
    return None


def _holiday(low: str) -> str | None:
    if _AROUND.search(low):
        return None
    return next((name for name, words in _HOLIDAYS if any(w in low for w in words)), None)


# "最大的单日涨幅", "单日最大跌幅", "biggest one-day gain", "largest daily drop": one-period moves.
_MOVE_ZH = re.compile(r"(?:最大|最多)的?(?:单日|一天|单月|单周|单期)?(涨幅|跌幅|涨跌|波动|变动)|"
                      r"(?:单日|一天|单月|单周|当天)(?:最大|最多)的?(涨幅|跌幅|涨跌|上涨|下跌|变动)|"
                      r"(?:单日|一天)(?:涨|跌)(?:得)?最多|哪一?天(?:涨|跌|上涨|下跌)(?:得|的)?最(?:多|厉害|狠)")
_MOVE_EN = re.compile(r"(?:biggest|largest|greatest|steepest|sharpest|highest)\s+(?:single[- ])?"
                      r"(?:one[- ]day|daily|1[- ]day|day's|monthly|one[- ]month|single[- ]day)?\s*"
                      r"(gain|rise|jump|increase|rally|fall|drop|decline|loss|move|swing|change)", re.I)


def _moves(low: str) -> str | None:
    m = _MOVE_ZH.search(low)
    word = (m.group(0) if m else "") or ((mm := _MOVE_EN.search(low)) and mm.group(0)) or ""
    if not word:
        return None
    if re.search(r"涨幅|上涨|涨得|涨最|gain|rise|jump|increase|rally", word):
        return "rises"
    if re.search(r"跌|fall|drop|decline|loss", word):
        return "falls"
    return "both"


_WEEKDAYS_ZH = {"一": 0, "1": 0, "二": 1, "2": 1, "三": 2, "3": 2, "四": 3, "4": 3, "五": 4, "5": 4,
                "六": 5, "6": 5, "日": 6, "天": 6, "7": 6}
_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_BACK = ((re.compile(r"大前天"), 3), (re.compile(r"前天|day before yesterday", re.I), 2),
             (re.compile(r"昨天|昨日|yesterday", re.I), 1))
_WEEKDAY_WORD = re.compile(r"(上|这|本|下)(?:个)?(?:周|星期|礼拜)([一二三四五六日天1-7])|"
                           r"\b(last|this|next)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)


def relative_day(text: str) -> tuple[str, str] | None:
    """"上周五" on Monday 2026-12-07 → ("上周五", "2026-12-04"); 前天, yesterday, this Tuesday too.
    Weeks start on Monday, so "上周五" is the Friday of the week before this one."""
    from datetime import timedelta

    from orecast.agent.clock import today

    now = today()
    m = _WEEKDAY_WORD.search(text)
    if m:
        last = (m.group(1) or "").startswith("上") or (m.group(3) or "").lower() == "last"
        after = (m.group(1) or "").startswith("下") or (m.group(3) or "").lower() == "next"  # "下周一"
        wd = _WEEKDAYS_ZH[m.group(2)] if m.group(2) else _WEEKDAYS_EN.index(m.group(4).lower())
        monday = now - timedelta(days=now.weekday())
        day = monday + timedelta(days=wd - (7 if last else 0) + (7 if after else 0))
        if (m.group(3) or "").lower() == "last" and day >= now - timedelta(days=now.weekday()):
            day -= timedelta(days=7)
        return m.group(0), day.isoformat()  # "这周五" on Monday is ahead: the planner forecasts it
    for rx, back in _DAY_BACK:
        if mm := rx.search(text):
            return mm.group(0), (now - timedelta(days=back)).isoformat()
    return None


def _christmas(text: str, low: str, start: str | None) -> str | None:
    """"圣诞节2024年铁矿石价格" → "2024-12-25"; no year: the last Christmas on or before today."""
    from orecast.agent.clock import today

    if not re.search(r"圣诞|christmas|xmas", low):
        return None
    year = int(start[:4]) if start and re.fullmatch(r"\d{4}", start) else None
    if year is None:
        now = today()
        shift = -1 if re.search(r"去年|last year", low) else 0
        year = now.year + shift if shift or (now.month, now.day) >= (12, 25) else now.year - 1
    return f"{year:04d}-12-25"


# "(下半年)会怎样", "will do": what a period not yet over will bring, a forecast (a level or a shock
# before these words is a scenario, read first).
_WILL_GO = re.compile(r"会怎样|会怎么样|会如何|会怎么走|将如何|怎么走|走势如何|前景|"
                      r"\bwhat will\b|\bhow will\b|\bwill (?:it|iron ore|rebar|coke|prices?) do\b", re.I)


def _period_not_over(end: str) -> bool:
    """Whether the period ending `end` ("2026-12", "2026", "2026-12-31") ends after today's month."""
    from orecast.agent.clock import today

    now = today()
    return end[:7] >= f"{now.year:04d}-{now.month:02d}" if len(end) >= 7 else int(end[:4]) >= now.year


def parse(text: str, known_series: set[str] | None = None) -> Query:
    low = text.lower()
    q = Query(text=text, zh=is_chinese(text))
    for rx in NAME_SET:
        m = rx.search(text)
        if m and m.group(1) not in ("什么", "谁", "啥"):
            q.name = m.group(1)
            break
    for rx in ROLE_SET:
        m = rx.search(text)
        if m:
            q.role = m.group(1).strip()
            break
    for rx in REMEMBER_SET:
        m = rx.search(text)
        if m and m.group(1).strip(" 。.!！"):
            q.remember = m.group(1).strip().rstrip("。.!！")
            break
    q.asks_memory = _contains(low, MEMORY_ASK)
    q.asks_name = _contains(low, NAME_ASK)
    q.asks_role = _contains(low, ROLE_ASK)
    q.asks_past = _contains(low, PAST_ASK) or bool(
        re.search(r"(what|which) (was|is) my (first|second|third|last|previous) question|"
                  r"我(问的)?第[一二三1-3]个问题|我(问的)?(最开始|一开始|最早)(的问题|问)", low))
    q.asks_earlier_number = _contains(low, EARLIER_NUMBER_ASK)
    if q.asks_past:
        q.ordinal = next((n for rx, n in ORDINALS if rx.search(low)), None)
    for rx, rel in _RELATIVE:
        if rx.search(low):
            q.relative = rel
            break
    q.tomorrow = bool(re.search(r"\btomorrow\b|明天|明日", low))
    q.asks_why = bool(re.search(r"\bwhy\b|为什么|为何|什么原因|原因是", low))
    q.asks_band_why = q.asks_why and bool(re.search(
        r"区间|范围|不确定|置信|误差带|\bbands?\b|\branges?\b|interval|uncertain|so wide|wide", low))
    q.moves = _moves(low)
    q.annualised = bool(re.search(r"年化收益|年化涨|年化回报|平均每年|每年平均|年均涨|年均增长|复合增长|cagr|"
                                  r"annuali[sz]ed (?:return|change|growth)|per year on average|average annual (?:return|change|growth)", low))
    q.high_low = bool(re.search(r"最高.{0,8}最低.{0,8}(?:差|相差|区间|幅度|距离)|最低.{0,8}最高.{0,8}(?:差|相差|幅度)|"
                                r"high.{0,25}low.{0,25}(?:difference|gap|range|spread)|high-low range", low))
    if re.search(r"一定|肯定|确定|必然|多大把握|有把握|几成把握|概率多大|多大概率|多大可能|guarantee|for sure|certain|"
                 r"how sure|how confident|how likely|会涨吗|会跌吗|会不会涨|会不会跌|能涨吗|"
                 r"\bwill (?:it|iron ore|rebar|coke|prices?) (?:rise|fall|go up|go down)\b", low) \
            and not re.search(r"\d|全年|整年|whole year", low):
        q.certainty = ("down" if re.search(r"跌|降|fall|drop|down|declin", low) else
                       "up" if re.search(r"涨|升|rise|up\b|gain|climb", low) else None)
    q.whole_year = bool(re.search(r"全年|整年|whole year|full year", low)) and bool(re.search(
        r"涨还是跌|跌还是涨|涨跌|会涨|会跌|上涨|下跌|rise or fall|up or down|go up|go down|rise|fall", low))
    q.advice = bool(re.search(r"适合买|适合卖|该不该买|该不该卖|能不能买|可以买吗|能买吗|值得买|抄底|要不要买|要不要卖|"
                              r"做多|做空|should i (?:buy|sell|go long|short)|good time to (?:buy|sell)|worth buying|"
                              r"buy or sell", low))
    if (pm := re.search(r"(\d+(?:\.\d+)?)\s*(?:个点|点|points?\b)", low)) and re.search(
            r"什么意思|指什么|啥意思|怎么理解|意味着|是多少|等于多少|\bmeans?\b|what does", low) and not _IF.search(low):
        q.points_asked = float(pm.group(1))
    q.streak = bool(re.search(r"连续.{0,6}(?:几|多少)个?(?:月|天|交易日)|连续多久|in a row|consecutive (?:months|days|sessions)|"
                              r"(?:低于|高于|跌破|站上|在)\s*50.{0,4}(?:几|多少)个?月|"
                              r"straight (?:months|days|sessions)", low))
    q.asks_average = bool(re.search(r"平均|均价|均值|\baverage\b|\bmean\b", low))
    q.scenario, q.scenario_unsupported = _scenario(text, low)
    if q.scenario and re.search(r"how much would (?:it|iron ore|the price|the iron ore price|rebar|coke)|"
                                r"(?:价格|它)?(?:会)?是多少(?:钱)?|会是几|变成多少|what would (?:it|the price) be", low) \
            and len(find_series(text, known_series)) <= 1:
        # "How much would iron ore be if it rose 20%?": arithmetic on its own price, not a co-movement.
        q.pct_move, q.scenario = q.scenario[1], None
    if q.scenario is None and q.scenario_unsupported is None:
        q.scenario_level = _scenario_level(low)
        if q.scenario_level is None and (target := _target_level(low)) is not None:
            q.target_level, q.level_direction = target
            if (m := _LEVEL.search(low)) and (st := re.search(
                    r"高于|超过|低于|\b(?:is|be|stays?|remains?|ends?|closes?)\s+(above|below|over|under)\b",
                    low[m.start(): m.start(2)])):
                # "6个月后高于100美元的概率": P(price above the level), whichever side it is on now.
                q.level_state = "below" if re.search(r"低于|below|under", st.group(0)) else "above"
                q.level_direction = None
        elif q.scenario_level is not None and (m := _LEVEL.search(low)):
            q.level_direction = level_direction(low[m.start(): m.start(2)])
    if q.scenario is None and q.scenario_unsupported is None and q.scenario_level is None:
        q.missing = [k for k, words in MISSING_TOPICS.items() if _contains(low, words)]
    q.series = find_series(text, known_series)
    if not q.series and re.search(r"人民币.{0,6}(?:升值|贬值)|(?:升值|贬值).{0,6}人民币|"
                                  r"(?:yuan|renminbi|rmb|cnh).{0,20}(?:appreciat|depreciat|strengthen|weaken)", low):
        q.series = ["usd_cnh_daily"]  # "人民币今年升值了多少": the USD/CNH rate, read the other way
    q.bad_date = bad_date(text)
    q.holiday = _holiday(low)
    q.holiday_edge = _holiday_edge(low)
    if (th := re.search(r"(\d+(?:\.\d+)?)\s*(美元|元|块|dollars?|usd|yuan|cny)?\s*(?:/吨|/干吨|一吨)?\s*"
                         r"(以下|以上|之下|之上)|(低于|高于|跌破|超过|below|under|above|over)\s*(\d+(?:\.\d+)?)\s*"
                         r"(美元|元|块|dollars?|usd|yuan|cny)?", low)) and re.search(
            r"哪些年|哪几年|哪一年|哪年|什么时候|哪些月|几次|多少次|多少天|多少个月|占比|比例|比重|几成|which years?|when\b|"
            r"how many (?:times|months|days)|what share|what percentage|how often|\bever\b|曾经|有没有|有过", low):
        level_, cur_ = (th.group(1), th.group(2)) if th.group(1) else (th.group(5), th.group(6))
        side = "below" if re.search(r"以下|之下|低于|跌破|below|under", th.group(0)) else "above"
        q.threshold = (float(level_), side, _currency(cur_))
    if not _IF.search(low) and (mv := re.search(r"(涨|跌|上涨|下跌|升|降|\brises?\b|\bfalls?\b|\bup\b|\bdown\b)\s*"
                                                r"(\d+(?:\.\d+)?)\s*(?:%|％|percent)", low)) and re.search(
            r"是多少|多少钱|是几|等于|what is|what's|how much|would be|=", low):
        q.pct_move = float(mv.group(2)) * (-1 if re.match(r"跌|下跌|降|fall|down", mv.group(1)) else 1)
    if not q.series and not q.missing and not q.scenario:
        q.unknown = unknown_subject(text, known_series)
    q.method = find_method(text)
    q.horizon, q.last_period = _horizon(_DATED_WORDS.sub(lambda m: " " * len(m.group(0)), text))
    if (ago := _ago(text)) is not None:
        q.ago, q.ago_words = ago
    if not _IF.search(low) and not q.scenario_level and not q.target_level and _CLAIM.search(low):
        # "如果…跌到3000元" is a condition and "会涨到800元吗" a target, not a price put forward
        q.claims = [(float(c.group(1).replace(",", "")),
                     "CNY" if re.match(r"元|块|yuan|cny|rmb", c.group(2)) else "USD")
                    for c in _CLAIM.finditer(low)]
        q.claim = q.claims[0]
    if m := re.search(r"(?:next|未来|后|ahead)\s*(-\s*\d+(?:\.\d+)?|负\s*\S+?|0+|零|\d+\.\d+)\s*(?:个)?\s*"
                      r"(?:months?|weeks?|days?|years?|trading days?|月|周|天|日|年|交易日)", low):
        q.bad_horizon = m.group(1).replace(" ", "")
    if q.method is None:
        q.bad_method = _unknown_method(low)
    q.start, q.end = _dates(text)
    if (part := part_of_month(text)) is not None and (q.start == q.end == part[0][:7] or not (q.start or q.end)):
        q.start, q.end, assumed = part
        q.month_assumed = part[0][:7] if assumed else ""
        q.horizon = None
    elif not (q.start or q.end) and (month := month_without_year(text)) is not None:
        # "铁矿石期货8月的均价": last August, not 8 months ahead; said in the answer
        q.start = q.end = month
        q.month_assumed = month if len(month) == 7 else ""
        q.horizon = None
    q.periods = compared_periods(text)
    q.asks_today = bool(re.search(r"(?:今天|明天|昨天|前天|后天)(?:是)?(?:几号|几月几号|几月几日|什么日子|哪一天|星期几|周几|礼拜几)|今天的日期|"
                                  r"what day (?:is|was|will be) (?:it )?(?:tomorrow|yesterday)|"
                                  r"现在是(?:几号|什么时候|哪一年)|what(?:'s| is) (?:the )?(?:date|day) today|"
                                  r"what(?:'s| is) today's date|today's date\??$|what day is (?:it )?today", low))
    if (xmas := _christmas(text, low, q.start)) is not None:
        q.christmas, q.start, q.end, q.relative = True, xmas, xmas, None
    elif not (q.start or q.end) and (rel_day := relative_day(text)) is not None:
        q.day_word, q.start = rel_day
        q.end, q.relative, q.tomorrow = q.start, None, False
    if q.relative and q.relative[0] == "year" and not (q.start or q.end) and (
            dated := _year_named(text, q.relative[1])) is not None:
        # "去年12月铁矿石均价" is December of last year, not the whole year: the relative year is
        # written out and the month (quarter, half) read as if the user had typed the year.
        q.start, q.end = _dates(dated)
        q.relative = None if (q.start or q.end) else q.relative
    if _contains(low, ("hrc", "hot-rolled", "hot rolled", "热卷", "热轧")):
        q.product = "hrc"
    elif _contains(low, ("rebar", "螺纹")):
        q.product = "rebar"
    for intent, words in INTENT_WORDS.items():
        if _contains(low, words):
            q.intents.append(intent)
    if re.search(r"去年同期|同比|year[- ]on[- ]year|\byoy\b|same (?:time|period|month) last year|比一年前|"
                 r"比去年这个时候|than a year ago|from a year ago", low) and \
            q.relative in (("year", -1), None) and not (q.start or q.end or q.last_period):
        # "比去年同期高还是低", "比一年前便宜多少": the latest value against a year before it (its 1-year
        # change, both ends in the data), not last year's history nor the price on the day a year ago.
        q.relative, q.ago = None, None
        q.intents = ["latest", *(i for i in q.intents if i not in ("latest", "history"))]
    if re.search(r"价差|差价|spread", low) and not (q.start or q.end or q.last_period) and "history" in q.intents:
        q.intents.remove("history")  # "the spread between HRC and rebar": now, not a history
        q.intents.append("latest")
    if q.moves and "describe" not in q.intents:
        q.intents.insert(0, "describe")  # the moves are in the statistics of the period
    elif q.moves:
        q.intents.remove("describe")
        q.intents.insert(0, "describe")
    if "seasonal" not in q.intents and re.search(r"通常|一般|往往|历来|历史上|\busually\b|\btypically\b|\btend", low) \
            and re.search(r"季度|月|春节|年初|年底|年末|半年|quarter|\bq[1-4]\b|\bhalf\b|month|january|december", low) \
            and re.search(r"涨|跌|升|降|rise|fall|up\b|down\b|gain|drop", low) and not q.start:
        q.intents.append("seasonal")  # "螺纹钢一季度通常涨还是跌": the by-month statistics
    if "seasonal" in q.intents:
        # "有季节性吗？哪个月份通常上涨？" asks for the by-month statistics, not the last price.
        q.intents = ["describe", *(i for i in q.intents
                                   if i not in ("describe", "latest", "history", "forecast"))]
    if q.horizon and "forecast" not in q.intents and not (
        {"backtest", "methods"} & set(q.intents)
    ):
        # "next 6 months?" or "未来三个月" alone is a forecast question.
        # "What will iron ore be worth in 2 years?" asks ahead too (it got the latest price).
        if re.search(r"next|ahead|coming|未来|之后|后|\bin\s+(?:\d+|one|two|three|six|a)\s+"
                     r"(?:trading\s+)?(?:days?|weeks?|months?|years?)\b|\bwill\b", low):
            q.intents.append("forecast")
    if not (q.start or q.end or q.periods or q.horizon) and q.relative in (None, ("year", -1), ("year", -2)) and \
            "seasonal" not in q.intents and \
            (part := part_without_year(text, q.relative[1] if q.relative else None)) is not None:
        q.start, q.end, q.part_assumed = part  # "三季度呢": its year taken (or the last one asked about)
        q.year_assumed = q.relative is None
        if q.relative:  # "last year's second half": that year's, nothing assumed
            q.relative, q.part_assumed = None, ""
    q.year_assumed = q.year_assumed or bool(q.month_assumed)
    if "forecast" not in q.intents and q.end and _WILL_GO.search(low) and not (
            q.scenario or q.scenario_unsupported or q.scenario_level or q.target_level) and \
            _period_not_over(q.end):
        q.intents.insert(0, "forecast")  # "下半年会怎样" on 2026-12-07: the rest of 2026, a forecast
        q.will_go = True
    stripped = re.sub(r"[\s?？!！.。,，]", "", low)
    q.follow_up = (
        _contains(low, FOLLOW_UP) or len(stripped) <= 12 or bool(_AND_THEN.match(low))
    ) and not q.asks_name and not q.asks_past
    return q
