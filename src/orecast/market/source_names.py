"""Data sources named in Chinese, for answers and charts in Chinese: the dataset names stay
recognisable, the prose is translated."""

from __future__ import annotations

_SOURCE_ZH = (
    ("World Bank Commodity Price Data", "世界银行大宗商品价格数据（Pink Sheet，月度）"),
    (
        "DCE daily quotes",
        "大商所日度行情（连续主力合约，新浪财经，经 github.com/oowuyueco/pub 整理）",
    ),
    (
        "SHFE daily quotes",
        "上期所日度行情（连续主力合约，新浪财经，经 github.com/oowuyueco/pub 整理）",
    ),
    ("USD/CNH daily", "美元兑离岸人民币日度数据（github.com/oowuyueco/pub）"),
    ("National Bureau of Statistics", "国家统计局制造业PMI（经 github.com/oowuyueco/pub）"),
    ("World Steel Association", "世界钢铁协会（worldsteel）"),
)


def source_zh(src: str) -> str:
    """A source citation (sources joined by " | ") in Chinese; an unknown one as it is."""
    parts = []
    for piece in str(src).split(" | "):
        parts.append(next((zh for en, zh in _SOURCE_ZH if en in piece), piece))
    return "；".join(dict.fromkeys(parts))
