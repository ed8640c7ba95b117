"""Writing the answer from tool results: numbers, ranges, dates, units and sources — nothing else.

Every number printed here is read from a tool's JSON; the only text that is not from a tool is
qualitative (the risks an analyst always names next to a forecast). Numbers are formatted by
`fmt` so tests can find them again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from orecast.agent.offline import catalogue as cat
from orecast.agent.tools import payload_of


def fmt(value: Any, digits: int | None = None) -> str:
    """2 decimals for prices and indices, 4 below 10 (exchange rates), '—' when missing."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    if digits is None:
        digits = 4 if abs(value) < 10 else 2
    return f"{value:.{digits}f}"


def pct(value: Any) -> str:
    if not isinstance(value, int | float):
        return "—"
    return f"{value:+.2f}%"


def _name(p: dict[str, Any], zh: bool) -> str:
    sid = str(p.get("series") or p.get("series_id") or p.get("id") or "")
    key = "name_zh" if zh else "name_en"
    return str(p.get(key) or cat.name(sid, zh) or sid)


def _source(p: dict[str, Any], zh: bool) -> str:
    src = p.get("source")
    if not src:
        return ""
    return f"\n来源：{src}" if zh else f"\nSource: {src}"


# ---- one renderer per tool ---------------------------------------------------------------


def latest(p: dict[str, Any], zh: bool) -> str:
    unit = p.get("unit", "")
    last = p.get("latest", {})
    ch = p.get("changes", {})
    lines = [
        (f"**{_name(p, zh)}** 最新值：{fmt(last.get('value'))} {unit}（{last.get('date')}）。" if zh
         else f"**{_name(p, zh)}** latest: {fmt(last.get('value'))} {unit} ({last.get('date')}).")
    ]
    labels = {"previous": ("较上一期", "vs previous"), "1m": ("较约一个月前", "vs ~1 month earlier"),
              "1y": ("较约一年前", "vs ~1 year earlier")}
    digits = 4 if isinstance(last.get("value"), int | float) and abs(last["value"]) < 10 else 2
    seen: set[str] = set()
    for key, (lz, le) in labels.items():
        c = ch.get(key)
        if c and c.get("from", {}).get("date") not in seen:
            seen.add(c.get("from", {}).get("date"))
            frm = c.get("from", {})
            lines.append(f"- {lz if zh else le}（{frm.get('date')}，{fmt(frm.get('value'))}）："
                         f"{fmt(c.get('change'), digits)}，{pct(c.get('change_pct'))}" if zh else
                         f"- {le} ({frm.get('date')}, {fmt(frm.get('value'))}): "
                         f"{fmt(c.get('change'), digits)}, {pct(c.get('change_pct'))}")
    return "\n".join(lines) + _source(p, zh)


def history(p: dict[str, Any], zh: bool) -> str:
    unit = p.get("unit", "")
    f, last, lo, hi = p.get("first", {}), p.get("last", {}), p.get("min", {}), p.get("max", {})
    if zh:
        text = (f"**{_name(p, zh)}** {p.get('start')} 至 {p.get('end')}（{p.get('count')} 个观测）：\n"
                f"- 起点 {fmt(f.get('value'))}，终点 {fmt(last.get('value'))} {unit}，区间涨跌 {pct(p.get('change_pct'))}\n"
                f"- 最高 {fmt(hi.get('value'))}（{hi.get('date')}），最低 {fmt(lo.get('value'))}（{lo.get('date')}），"
                f"均值 {fmt(p.get('mean'))}")
    else:
        text = (f"**{_name(p, zh)}** from {p.get('start')} to {p.get('end')} ({p.get('count')} observations):\n"
                f"- from {fmt(f.get('value'))} to {fmt(last.get('value'))} {unit}, change {pct(p.get('change_pct'))}\n"
                f"- high {fmt(hi.get('value'))} ({hi.get('date')}), low {fmt(lo.get('value'))} ({lo.get('date')}), "
                f"mean {fmt(p.get('mean'))}")
    return text + _source(p, zh)


def catalogue(p: dict[str, Any], zh: bool) -> str:
    rows = p.get("series", [])
    head = f"共有 {len(rows)} 个序列：" if zh else f"{len(rows)} series are available:"
    lines = [head]
    for r in rows:
        nm = r.get("name_zh") if zh else r.get("name_en")
        lines.append(f"- `{r.get('id')}` {nm}（{r.get('unit')}，{r.get('frequency')}，{r.get('start')} – {r.get('end')}）"
                     if zh else
                     f"- `{r.get('id')}` {nm} ({r.get('unit')}, {r.get('frequency')}, {r.get('start')} – {r.get('end')})")
    return "\n".join(lines)


def _scalars(p: dict[str, Any], skip: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in p.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and k not in skip]


CHANGE_LABELS = {"1w": ("1周", "1 week"), "1m": ("1个月", "1 month"), "3m": ("3个月", "3 months"),
                 "6m": ("6个月", "6 months"), "12m": ("12个月", "12 months"), "1y": ("1年", "1 year")}


def describe(p: dict[str, Any], zh: bool) -> str:
    unit = p.get("unit", "")
    rng, last, dd = p.get("range", {}), p.get("last", {}), p.get("max_drawdown", {})
    changes = {k: v for k, v in (p.get("change_pct") or {}).items() if v is not None}
    diffusion = "50" in str(unit)  # PMI: changes are points, not %
    def ch(v: Any) -> str:
        return f"{v:+.2f}" if diffusion else pct(v)
    if zh:
        lines = [f"**{_name(p, zh)}** 统计（{rng.get('first')} 至 {rng.get('last')}，{rng.get('count')} 个观测，单位 {unit}）：",
                 f"- 最新 {fmt(last.get('value'))}（{last.get('date')}），处于区间第 {fmt(p.get('percentile_in_range'))} 百分位",
                 f"- 均值 {fmt(p.get('mean'))}，最低 {fmt(p.get('min'))}，最高 {fmt(p.get('max'))}"]
        if p.get("volatility_annualised_pct") is not None:
            lines.append(f"- 近一年年化波动率 {fmt(p.get('volatility_annualised_pct'))}%")
        if dd.get("pct") is not None:
            lines.append(f"- 最大回撤 {fmt(dd.get('pct'))}%（{dd.get('peak')} 至 {dd.get('trough')}）")
        if changes:
            lines.append("- 涨跌：" + "，".join(f"{CHANGE_LABELS.get(k, (k, k))[0]} {ch(v)}" for k, v in changes.items()))
    else:
        lines = [f"**{_name(p, zh)}** statistics ({rng.get('first')} to {rng.get('last')}, {rng.get('count')} observations, unit {unit}):",
                 f"- latest {fmt(last.get('value'))} ({last.get('date')}), percentile {fmt(p.get('percentile_in_range'))} of the range",
                 f"- mean {fmt(p.get('mean'))}, min {fmt(p.get('min'))}, max {fmt(p.get('max'))}"]
        if p.get("volatility_annualised_pct") is not None:
            lines.append(f"- annualised volatility (last year) {fmt(p.get('volatility_annualised_pct'))}%")
        if dd.get("pct") is not None:
            lines.append(f"- max drawdown {fmt(dd.get('pct'))}% ({dd.get('peak')} to {dd.get('trough')})")
        if changes:
            lines.append("- changes: " + ", ".join(f"{CHANGE_LABELS.get(k, (k, k))[1]} {ch(v)}" for k, v in changes.items()))
    return "\n".join(lines) + _source(p, zh)


def relate(p: dict[str, Any], zh: bool) -> str:
    rng = p.get("range", {})
    a, b = str(p.get("a")), str(p.get("b"))
    na, nb = cat.name(a, zh), cat.name(b, zh)
    lag = p.get("best_lag")
    if zh:
        lag_text = ("同步变动最强" if lag == 0 else
                    f"{nb}领先 {lag} 期时相关最强" if isinstance(lag, int) and lag > 0 else
                    f"{na}领先 {-lag if isinstance(lag, int) else lag} 期时相关最强")
        text = (f"**{na}** 与 **{nb}**（{p.get('frequency')} 收益率，{rng.get('first')} 至 {rng.get('last')}，{rng.get('n')} 期）：\n"
                f"- 相关系数 {fmt(p.get('correlation'), 4)}，β（{na}对{nb}）{fmt(p.get('beta_a_on_b'), 4)}\n"
                f"- 领先滞后：{lag_text}（相关 {fmt(p.get('best_lag_correlation'), 4)}）")
    else:
        lag_text = ("strongest at lag 0 (they move together)" if lag == 0 else
                    f"strongest when {nb} leads by {lag} periods" if isinstance(lag, int) and lag > 0 else
                    f"strongest when {na} leads by {-lag if isinstance(lag, int) else lag} periods")
        text = (f"**{na}** vs **{nb}** ({p.get('frequency')} returns, {rng.get('first')} to {rng.get('last')}, {rng.get('n')} periods):\n"
                f"- correlation {fmt(p.get('correlation'), 4)}, beta of {na} on {nb} {fmt(p.get('beta_a_on_b'), 4)}\n"
                f"- lead/lag: {lag_text} (correlation {fmt(p.get('best_lag_correlation'), 4)})")
    return text + _source(p, zh)


def margin(p: dict[str, Any], zh: bool) -> str:
    rng, last = p.get("range", {}), p.get("last", {})
    if zh:
        text = (f"**{p.get('name_zh')}**（{p.get('formula')}，单位 {p.get('unit')}）：\n"
                f"- 最新 {fmt(last.get('value'))}（{last.get('date')}），处于 {rng.get('first')} 以来第 {fmt(p.get('percentile_in_range'))} 百分位\n"
                f"- 均值 {fmt(p.get('mean'))}，最低 {fmt(p.get('min'))}，最高 {fmt(p.get('max'))}\n"
                "- 利润收缩时钢厂倾向减产、压低铁矿石需求；利润扩张则支撑矿价。"
                f"\n注意：{p.get('caveat')}")
    else:
        text = (f"**{p.get('name_en')}** ({p.get('formula')}, unit {p.get('unit')}):\n"
                f"- latest {fmt(last.get('value'))} ({last.get('date')}), percentile {fmt(p.get('percentile_in_range'))} since {rng.get('first')}\n"
                f"- mean {fmt(p.get('mean'))}, min {fmt(p.get('min'))}, max {fmt(p.get('max'))}\n"
                "- Shrinking margins push mills to cut output and weigh on ore demand; wide margins support ore."
                f"\nCaveat: {p.get('caveat')}")
    return text + _source(p, zh)


def generic(p: Any, zh: bool) -> str:
    if not isinstance(p, dict):
        return str(p)
    lines = [f"**{_name(p, zh)}**" if (p.get("series") or p.get("name_zh")) else ""]
    lines += [f"- {k}: {fmt(v)}" for k, v in _scalars(p)]
    return "\n".join(x for x in lines if x) + _source(p, zh)


def _forecast_rows(p: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("points", "forecast", "rows", "path", "values"):
        rows = p.get(key)
        if isinstance(rows, list) and rows and isinstance(rows[0], dict):
            return rows
    return []


def _band(row: dict[str, Any], level: int) -> tuple[Any, Any]:
    lo = hi = None
    for k, v in row.items():
        if str(level) in k and re.search(r"lo|lower", k):
            lo = v
        elif str(level) in k and re.search(r"hi|upper", k):
            hi = v
    for key in ("intervals", "bands"):
        if isinstance(row.get(key), dict) and str(level) in row[key]:
            band = row[key][str(level)]
            if isinstance(band, dict):
                lo, hi = band.get("lower", band.get("lo")), band.get("upper", band.get("hi"))
            elif isinstance(band, list | tuple) and len(band) == 2:
                lo, hi = band
    return lo, hi


def _mean(row: dict[str, Any]) -> Any:
    for key in ("mean", "forecast", "point", "value", "yhat"):
        if key in row:
            return row[key]
    return None


RISKS_ZH = ("风险：澳大利亚与巴西发运（飓风、雨季、检修）、中国粗钢限产与地产需求、港口库存变化、钢厂利润与"
            "煤焦成本、美元兑人民币汇率；统计模型不包含政策与突发事件。")
RISKS_EN = ("Risks: Australian and Brazilian shipments (cyclones, rainy season, maintenance), Chinese "
            "steel output curbs and property demand, port stocks, mill margins and coke costs, the "
            "USD/CNH rate; the statistical baseline ignores policy and shocks.")


def forecast(p: dict[str, Any], zh: bool) -> str:
    unit = p.get("unit", "")
    rows = _forecast_rows(p)
    method = p.get("method_used") or p.get("method")
    last_obs = p.get("last_observation") or p.get("last") or {}
    lines = [f"**{_name(p, zh)}** 预测（方法 {method}，{len(rows)} 期，单位 {unit}）：" if zh
             else f"**{_name(p, zh)}** forecast (method {method}, {len(rows)} periods, unit {unit}):"]
    if isinstance(last_obs, dict) and last_obs.get("value") is not None:
        lines.append(f"- 最新实际值 {fmt(last_obs.get('value'))}（{last_obs.get('date')}）" if zh
                     else f"- last actual {fmt(last_obs.get('value'))} ({last_obs.get('date')})")
    if p.get("reason"):
        lines.append(f"- 方法选择：{p.get('reason')}" if zh else f"- method choice: {p.get('reason')}")
    show = rows if len(rows) <= 6 else [rows[0], rows[len(rows) // 2], rows[-1]]
    for row in show:
        lo80, hi80 = _band(row, 80)
        lo95, hi95 = _band(row, 95)
        lines.append(
            f"- {row.get('date')}：{fmt(_mean(row))}，80% 区间 {fmt(lo80)} – {fmt(hi80)}，"
            f"95% 区间 {fmt(lo95)} – {fmt(hi95)}" if zh else
            f"- {row.get('date')}: {fmt(_mean(row))}, 80% range {fmt(lo80)} – {fmt(hi80)}, "
            f"95% range {fmt(lo95)} – {fmt(hi95)}"
        )
    lines.append(RISKS_ZH if zh else RISKS_EN)
    return "\n".join(lines) + _source(p, zh)


def backtest(p: dict[str, Any], zh: bool) -> str:
    o = p.get("origins", {})
    cov = p.get("coverage_pct", {})
    unit = p.get("unit", "")
    method = p.get("method")
    if zh:
        text = (f"**{_name(p, zh)}** 回测（方法 {method}，提前 {p.get('horizon')} 期，"
                f"{o.get('count')} 个起点 {o.get('first')} – {o.get('last')}）：\n"
                f"- MAE {fmt(p.get('mae'))} {unit}，MAPE {fmt(p.get('mape_pct'))}%，MASE {fmt(p.get('mase'))}"
                f"（随机游走 MAE {fmt(p.get('naive_mae'))}；MASE<1 表示优于“不变”预测）\n"
                f"- 区间覆盖率：80% 区间 {fmt(cov.get('80'))}%，95% 区间 {fmt(cov.get('95'))}%")
    else:
        text = (f"**{_name(p, zh)}** backtest (method {method}, {p.get('horizon')} periods ahead, "
                f"{o.get('count')} origins {o.get('first')} – {o.get('last')}):\n"
                f"- MAE {fmt(p.get('mae'))} {unit}, MAPE {fmt(p.get('mape_pct'))}%, MASE {fmt(p.get('mase'))} "
                f"(random-walk MAE {fmt(p.get('naive_mae'))}; MASE < 1 beats 'no change')\n"
                f"- interval coverage: 80% {fmt(cov.get('80'))}%, 95% {fmt(cov.get('95'))}%")
    return text + _source(p, zh)


def method_ranking(results: list[dict[str, Any]], zh: bool) -> str:
    """Several backtests of one series: a ranking by MAE."""
    ranked = sorted((r for r in results if isinstance(r.get("mae"), int | float)), key=lambda r: r["mae"])
    if not ranked:
        return ""
    best = ranked[0]
    lines = [f"**{_name(best, zh)}** 各方法回测（提前 {best.get('horizon')} 期，按 MAE 排序）：" if zh
             else f"**{_name(best, zh)}** methods backtested ({best.get('horizon')} periods ahead, by MAE):"]
    for r in ranked:
        lines.append(f"- {r.get('method')}: MAE {fmt(r.get('mae'))}, MAPE {fmt(r.get('mape_pct'))}%, "
                     f"MASE {fmt(r.get('mase'))}")
    lines.append(f"最好的方法：{best.get('method')}。" if zh else f"Best method: {best.get('method')}.")
    return "\n".join(lines) + _source(best, zh)


def chart(p: dict[str, Any], zh: bool) -> str:
    png, title = p.get("png"), p.get("title")
    if zh:
        return f"图表「{title}」已保存为 PNG： {png}\n（网页可用 ECharts 配置 {p.get('echarts')} 渲染）"
    return f"Chart \"{title}\" saved as PNG: {png}\n(ECharts option for the web page: {p.get('echarts')})"


def report(p: dict[str, Any], zh: bool) -> str:
    if zh:
        return (f"报告已导出：{p.get('report')}（{p.get('sections')} 个问答，{p.get('figures')} 张图）。")
    return f"Report exported: {p.get('report')} ({p.get('sections')} sections, {p.get('figures')} figures)."


RENDERERS: dict[str, Callable[[dict[str, Any], bool], str]] = {
    "latest_price": latest,
    "price_history": history,
    "list_series": catalogue,
    "describe_series": describe,
    "relate_series": relate,
    "mill_margin": margin,
    "forecast_price": forecast,
    "backtest_forecast": backtest,
    "make_chart": chart,
    "export_report": report,
}


def render(tool: str, text: str, zh: bool) -> str:
    p = payload_of(text)
    if not isinstance(p, dict):
        return text.strip()
    fn = RENDERERS.get(tool, generic)
    return fn(p, zh)
