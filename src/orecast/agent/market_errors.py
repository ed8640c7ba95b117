"""Errors of the market tools in the user's language.

`orecast.market` raises `MarketError` with an English line plus a `code` and `params` (it imports
nothing of the agent and knows no language but English). A tool turns it into a JSON error the model
reads (`tool_error`: the English line, then the code and parameters as JSON on a line of their own,
so the terminal's one-line trace stays plain), and the offline analyst words it in the question's
language (`explain`). A real model reads the same and the prompt's rule to answer in one language.
"""

from __future__ import annotations

import json
from typing import Any

from orecast.market.errors import MarketError

_ZH: dict[str, str] = {
    "bad_aggregation": "不支持的汇总方式 {how}；可用 mean、last、sum、max、min 或 first。",
    "bad_coefficients": "铁矿石和焦炭的系数都必须 ≥ 0。",
    "bad_date": "{what_zh} {value} 不是日期（请用 YYYY-MM-DD 或 YYYY-MM）。",
    "bad_horizon": "预测步数必须是不小于 1 的整数（收到 {value}）。",
    "bad_index": "序列需要至少 3 个日期的时间索引。",
    "bad_level": "情景需要冲击幅度或目标价位其中之一，价位必须是正数（收到 {value}）。",
    "bad_levels": "置信水平必须在 0 到 100 之间（收到 {value}）。",
    "bad_max_lag": "最大滞后期必须 ≥ 0（收到 {value}）。",
    "bad_shock": "冲击幅度必须是有限的数字（收到 {value}）。",
    "compare_not_positive": "{series} 在 {date} 的值是 {value}，无法以它为 100 编制指数；请单独画这个序列。",
    "compare_with_forecast": "两个序列的对比图不带预测；要看预测，请单独画一个序列。",
    "bad_step": "步长必须是 ≥ 1 的整数（收到 {value}）。",
    "csv_bad_dates": "{file} 的 {column} 列没有可识别的日期。",
    "csv_no_column": "{file} 没有 {column} 列。",
    "csv_no_date_column": "{file} 没有日期列（现有列：{columns}）；请把日期列命名为 date。",
    "csv_no_numeric": "{file} 没有数值列。",
    "csv_not_a_file": "{path} 是{kind_zh}，不是 CSV 文件。",
    "csv_not_found": "找不到 CSV 文件：{path}。",
    "csv_too_large": "{path} 超过 {limit_mib} MiB，作为一个序列的 CSV 文件太大了。",
    "csv_too_short": "{file} 中带日期的数值行少于 3 行。",
    "csv_unreadable": "无法把 {path} 当作 CSV 读取。",
    "finer_freq": "不能把{frequency_zh}序列 {series} 转换成更细的{target_zh}数据。",
    "horizon_too_long": "预测 {horizon} 期比序列本身还长（只有 {count} 个数据）。",
    "invalid": "输入有误，这个请求无法完成。",
    "max_lag_too_long": "最大滞后期 {value} 太长：{a} 和 {b} 在范围内只有 {count} 个共同收益率，最多可试 {limit} 期。",
    "no_calendar": "没有 {year} 年的交易所休市日历：中国期货交易所的交易日只知道到 {last} 年，请缩短预测期。",
    "no_data_in_range": "{series} 在 {start_zh} 到 {end_zh} 之间没有数据；它覆盖 {first} 至 {last}。",
    "no_indicator": "nowcast 方法需要一个日度指标，{series} 没有（只有世界银行月度铁矿石价格有）。",
    "no_origin": "在 {start_zh} 与最后一个已知 {horizon} 步结果的日期（{last}）之间没有可回测的起点。",
    "same_series": "两边是同一个序列（{series}）：请换成两个不同的序列。",
    "shock_too_low": "相对冲击必须大于 -100%。",
    "start_after_end": "开始日期 {start} 晚于结束日期 {end}。",
    "start_too_early": "从 {start} 开始时可用于拟合的数据少于 {need} 个；{series} 最早的起点是 {earliest}。",
    "too_few_values": "序列 {series} 的数值少于 3 个。",
    "too_little_overlap": "{a} 和 {b} 只有 {count} 个共同时期，至少需要 {need} 个。",
    "too_short": "{series} 在所选范围内只有 {count} 个数据，预测至少需要 {need} 个。",
    "unknown_driver": "不认识的驱动因素 {driver}；支持：{supported}。",
    "unknown_freq": "不认识的频率 {freq}；可用 W（周）、M（月）、Q（季）、A（年）。",
    "unknown_method": "不认识的方法 {method}；可用：{choices}。",
    "unknown_product": "不认识的钢材品种 {product}；盘面利润可算：{choices}。",
    "unknown_series": "没有 {series} 这个序列{hint_zh}",
    "unknown_source": "不认识的数据源 {source}；可用：{choices}。",
    "unsupported_driver": "我没有衡量{what_zh}的数据，无法做这个情景；支持的驱动因素：{supported}。",
}
_KIND_ZH = {"folder": "文件夹", "device": "设备文件", "pipe": "管道", "socket": "套接字"}
_FREQ_ZH = {"daily": "日度", "weekly": "周度", "monthly": "月度", "quarterly": "季度",
            "annual": "年度", "W": "周度", "M": "月度", "Q": "季度", "A": "年度"}


def tool_error(exc: MarketError) -> str:
    """The error a tool returns: the English line, then `{"code": …, "params": …}`."""
    data = json.dumps({"code": exc.code, "params": exc.params}, ensure_ascii=False, default=str)
    return f"{exc}\n{data}"


def explain(text: str, zh: bool) -> str | None:
    """A market tool error (the text of `tool_error`) in Chinese or English; None if `text` is
    not one."""
    english, _, data = text.strip().partition("\n")
    try:
        payload = json.loads(data)
    except ValueError:
        return None
    if not isinstance(payload, dict) or "code" not in payload:
        return None
    if not zh:
        return english
    params = payload.get("params") if isinstance(payload.get("params"), dict) else {}
    values: dict[str, Any] = {
        k: "、".join(map(str, v)) if isinstance(v, list) else v for k, v in params.items()
    }
    values["what_zh"] = values.get("what_zh") or (
        "开始日期" if params.get("what") == "start" else "结束日期" if params.get("what") == "end"
        else "日期")
    values["start_zh"] = params.get("start") or "开头"
    values["end_zh"] = params.get("end") or "结尾"
    values["kind_zh"] = _KIND_ZH.get(str(params.get("kind")), "特殊文件")
    values["frequency_zh"] = _FREQ_ZH.get(str(params.get("frequency")), "")
    values["target_zh"] = _FREQ_ZH.get(str(params.get("target")), "")
    close = params.get("suggestions") or []
    values["hint_zh"] = (f"；你是不是指 {'、'.join(close)}？" if close
                         else "；可以用 list_series 查看全部序列。")
    template = _ZH.get(str(payload["code"]), _ZH["invalid"])
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):
        return _ZH["invalid"]
