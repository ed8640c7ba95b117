"""Charts of a price history with its forecast fan, or of two series side by side: a PNG and an
Apache ECharts `option` spec.

The PNG uses matplotlib's object API (a `Figure`, no pyplot state), so it is safe in servers and
tests. The spec is plain JSON for the web page's ECharts: stacked areas draw the 80/95 % bands.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from orecast.market.errors import MarketError
from orecast.market.fonts import cjk_font
from orecast.market.forecast import Forecast
from orecast.market.forecast import forecast as make_forecast
from orecast.market.loaders import DateLike, SeriesLike, load_series, meta_of
from orecast.market.source_names import source_zh
from orecast.market.stats import common_frequency
from orecast.market.util import iso, num

_BAND_COLOURS = {80: "#4c78a8", 95: "#9ecae9"}


@dataclass(frozen=True)
class Compared:
    """The second series of a comparison chart, on the first one's dates and index scale."""

    values: pd.Series
    name_en: str
    name_zh: str


@dataclass(frozen=True)
class Chart:
    """A chart of `history` and an optional forecast, or of `history` and `compared` as indexes;
    `spec` is an ECharts option object."""

    title: str
    title_en: str
    history: pd.Series
    forecast: Forecast | None
    unit: str
    source: str
    lang: str = "en"  # "zh": Chinese title and labels in the PNG when a CJK font is installed
    name_zh: str = ""
    name_en: str = ""
    compared: Compared | None = None

    @property
    def spec(self) -> dict[str, object]:
        if self.compared is not None:
            return comparison_option(self)
        return echarts_option(self.title, self.history, self.forecast, self.unit, self.source)

    def save_png(self, path: str | Path, *, dpi: int = 120) -> Path:
        return render_png(self, Path(path), dpi=dpi)

    def to_dict(self) -> dict[str, object]:
        return {"title": self.title, "unit": self.unit, "source": self.source,
                "echarts_option": self.spec}


def chart(
    series: SeriesLike,
    *,
    horizon: int | None = None,
    method: str = "auto",
    levels: Sequence[float] = (80, 95),
    start: DateLike = None,
    end: DateLike = None,
    forecast: Forecast | None = None,
    png: str | Path | None = None,
    lang: str = "en",
    compare: SeriesLike | None = None,
) -> Chart:
    """History from `start` plus a forecast fan (given, or made when `horizon` is set); with
    `compare`, that series beside the first instead, both as an index (see `comparison`).

    `lang="zh"` labels the PNG in Chinese when the machine has a CJK font (see `fonts.py`), else
    in English. Example: `chart("iron_ore_wb_monthly", horizon=6, start="2020", png="ore.png").spec`.
    """
    if compare is not None:
        if horizon is not None or forecast is not None:
            raise MarketError("a chart comparing two series has no forecast: chart one series for its forecast",
                              "compare_with_forecast")
        result = comparison(series, compare, start=start, end=end, lang=lang)
        if png is not None:
            result.save_png(png)
        return result
    values = load_series(series, end=end)
    if forecast is None and horizon is not None:
        forecast = make_forecast(values, horizon, method, levels)
    shown = load_series(values, start=start) if start is not None else values
    meta = meta_of(values)
    suffix = f" — {forecast.method} forecast" if forecast is not None else ""
    result = Chart(title=f"{meta.name_en} / {meta.name_zh}{suffix}",
                   title_en=f"{meta.name_en}{suffix}", history=shown, forecast=forecast, unit=meta.unit,
                   source=meta.source, lang=lang, name_zh=meta.name_zh)
    if png is not None:
        result.save_png(png)
    return result


def comparison(
    series: SeriesLike, other: SeriesLike, *, start: DateLike = None, end: DateLike = None, lang: str = "en"
) -> Chart:
    """Two series on their common dates, each as an index that is 100 at the first of them.

    Prices in different units and levels (yuan and dollars, ore and steel) move on one scale this
    way; series of different frequencies are compared at the coarser one (period averages), as
    `relate` compares them. Example: `chart("dce_iron_ore_daily", compare="shfe_rebar_daily",
    start="2024")`.
    """
    a, b = load_series(series, end=end), load_series(other, end=end)
    ma, mb = meta_of(a), meta_of(b)
    if ma.id == mb.id:
        raise MarketError(f"{ma.id} is compared with itself: name two different series", "same_series",
                          series=ma.id)
    freq = common_frequency(ma.frequency, mb.frequency)
    if freq is not None:
        a, b = load_series(a, freq=freq), load_series(b, freq=freq)
    if start is not None:
        a, b = load_series(a, start=start), load_series(b, start=start)
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    if len(joined) < 2:
        raise MarketError(
            f"{ma.id} and {mb.id} share only {len(joined)} dates in range; a comparison needs at least 2",
            "too_little_overlap", a=ma.id, b=mb.id, count=len(joined), need=2,
        )
    base = joined.iloc[0]
    for column, meta in (("a", ma), ("b", mb)):
        if not base[column] > 0:
            raise MarketError(
                f"{meta.id} is {num(base[column])} on {iso(joined.index[0])}, so it cannot be indexed to 100 "
                "there; chart it on its own", "compare_not_positive", series=meta.id,
                date=iso(joined.index[0]), value=num(base[column]),
            )
    indexed = joined / base * 100
    scale = f"100 = {iso(joined.index[0])}"
    return Chart(
        title=f"{ma.name_en} vs {mb.name_en} / {ma.name_zh} 与 {mb.name_zh}",
        title_en=f"{ma.name_en} vs {mb.name_en} ({scale})",
        history=indexed["a"], forecast=None, unit=scale,
        source=" | ".join(dict.fromkeys((ma.source, mb.source))), lang=lang,
        name_zh=ma.name_zh, name_en=ma.name_en,
        compared=Compared(indexed["b"], mb.name_en, mb.name_zh),
    )


def _title(text: str, source: str) -> dict[str, str]:
    """The title is "English / 中文"; the page shows the source line in its language too
    (`subtext_zh`, which ECharts itself ignores)."""
    return {"text": text, "subtext": f"Source: {source}", "subtext_zh": f"来源：{source_zh(source)}"}


def comparison_option(ch: Chart) -> dict[str, object]:
    """The ECharts option of a comparison chart: one line per series, named "English / 中文"."""
    assert ch.compared is not None
    lines = [(f"{ch.name_en} / {ch.name_zh}", ch.history),
             (f"{ch.compared.name_en} / {ch.compared.name_zh}", ch.compared.values)]
    return {
        "title": _title(ch.title, ch.source),
        "tooltip": {"trigger": "axis"},
        "legend": {"data": [name for name, _ in lines]},
        "xAxis": {"type": "category", "data": [iso(d) for d in ch.history.index], "boundaryGap": False},
        "yAxis": {"type": "value", "name": ch.unit, "scale": True},
        "dataZoom": [{"type": "inside"}, {"type": "slider"}],
        "series": [
            {"name": name, "type": "line", "showSymbol": False, "data": [num(v) for v in values.to_numpy()]}
            for name, values in lines
        ],
    }


def echarts_option(
    title: str, history: pd.Series, fc: Forecast | None, unit: str, source: str
) -> dict[str, object]:
    dates = [iso(d) for d in history.index]
    future = [iso(d) for d in fc.mean.index] if fc is not None else []
    pad = [None] * len(dates)
    series: list[dict[str, object]] = [{
        "name": "history", "type": "line", "showSymbol": False,
        "data": [num(v) for v in history.to_numpy()] + [None] * len(future),
    }]
    if fc is not None:
        # The forecast line starts at the last observation so the fan joins the history.
        anchor = pad[:-1] + [num(history.iloc[-1])]
        series.append({
            "name": f"forecast ({fc.method})", "type": "line", "showSymbol": False,
            "lineStyle": {"type": "dashed"},
            "data": anchor + [num(v) for v in fc.mean.to_numpy()],
        })
        for lv in sorted(fc.levels, reverse=True):
            lo = [num(v) for v in fc.lower[lv].to_numpy()]
            stack = f"band{lv}"
            series.append({
                "name": f"{lv}% lower", "type": "line", "stack": stack, "symbol": "none",
                "lineStyle": {"opacity": 0}, "data": anchor + lo,
            })
            series.append({
                "name": f"{lv}% band", "type": "line", "stack": stack, "symbol": "none",
                "lineStyle": {"opacity": 0},
                "areaStyle": {"color": _BAND_COLOURS.get(lv, "#c6dbef"), "opacity": 0.45},
                # Band heights above the lower line; zero at the anchor so the fan opens from it.
                "data": pad[:-1] + [0.0] + [
                    num(fc.upper[lv].iloc[i] - fc.lower[lv].iloc[i]) for i in range(len(future))
                ],
            })
    return {
        "title": _title(title, source),
        "tooltip": {"trigger": "axis"},
        "legend": {"data": [s["name"] for s in series if "lower" not in str(s["name"])]},
        "xAxis": {"type": "category", "data": dates + future, "boundaryGap": False},
        "yAxis": {"type": "value", "name": unit, "scale": True},
        "dataZoom": [{"type": "inside"}, {"type": "slider"}],
        "series": series,
    }


@dataclass(frozen=True)
class PngLabels:
    """The words of a PNG chart, in one language, and the font that can draw them."""

    title: str
    history: str  # the line's name; of a comparison, the first series' name
    forecast: str  # with "{method}"
    interval: str  # with "{level}"
    source: str
    font: Path | None  # None: matplotlib's default font (Latin only)

    @property
    def language(self) -> str:
        return "zh" if self.font is not None else "en"


def png_labels(ch: Chart) -> PngLabels:
    """Chinese labels when asked for and a CJK font is installed; English otherwise, because
    matplotlib's own fonts would draw Chinese as empty boxes."""
    font = cjk_font() if ch.lang == "zh" else None
    if ch.compared is not None:
        # (the title's scale in the PNG: its y axis is the unit, "100 = <date>")
        zh = font is not None
        return PngLabels(
            title=f"{ch.name_zh} 与 {ch.compared.name_zh}（指数）" if zh else f"{ch.name_en} vs {ch.compared.name_en} (index)",
            history=ch.name_zh if zh else ch.name_en, forecast="", interval="",
            source=f"来源：{source_zh(ch.source)}" if zh else f"Source: {_ascii(ch.source)}", font=font,
        )
    if font is not None:
        suffix = f" — {ch.forecast.method} 预测" if ch.forecast is not None else ""
        return PngLabels(title=f"{ch.name_zh}{suffix}", history="历史", forecast="预测（{method}）",
                         interval="{level}% 区间", source=f"来源：{source_zh(ch.source)}", font=font)
    return PngLabels(title=ch.title_en, history="history", forecast="forecast ({method})",
                     interval="{level}% interval", source=f"Source: {_ascii(ch.source)}", font=None)


def _ascii(text: str) -> str:
    """`text` without its Chinese (a source line in a PNG drawn with Latin-only fonts)."""
    return re.sub(r"[^\x00-\x7f]+", "", text).replace("()", "").replace("  ", " ")


def render_png(ch: Chart, path: Path, *, dpi: int = 120) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties

    words = png_labels(ch)
    font = FontProperties(fname=str(words.font)) if words.font is not None else None
    fig = Figure(figsize=(10, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(ch.history.index, ch.history.to_numpy(), color="#222222", lw=1.2, label=words.history)
    if ch.compared is not None:
        other = ch.compared.name_zh if words.language == "zh" else ch.compared.name_en
        ax.plot(ch.compared.values.index, ch.compared.values.to_numpy(), color="#d9822b", lw=1.2, label=other)
    fc = ch.forecast
    if fc is not None:
        joint = pd.DatetimeIndex([ch.history.index[-1]]).append(fc.mean.index)
        last = float(ch.history.iloc[-1])
        for lv in sorted(fc.levels, reverse=True):
            ax.fill_between(joint, [last, *fc.lower[lv].to_numpy()],
                            [last, *fc.upper[lv].to_numpy()],
                            color=_BAND_COLOURS.get(lv, "#c6dbef"), alpha=0.6, lw=0,
                            label=words.interval.format(level=lv))
        ax.plot(joint, [last, *fc.mean.to_numpy()], color="#d62728", lw=1.5, ls="--",
                label=words.forecast.format(method=fc.method))
    def sized(size: float) -> FontProperties:
        # A FontProperties carries its own size, which would override `fontsize=`.
        props = font.copy() if font is not None else FontProperties()
        props.set_size(size)
        return props

    ax.set_title(words.title, fontproperties=sized(10))
    ax.set_ylabel(ch.unit)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", prop=sized(8))
    fig.text(0.01, 0.01, words.source, color="#555555", fontproperties=sized(6))
    path.parent.mkdir(parents=True, exist_ok=True)
    # Always PNG, at exactly `path`: matplotlib would pick the format from the suffix (failing on `.txt`)
    # and add `.png` to a name without one, writing a file other than the one asked for.
    # Drawn beside `path` under another name and renamed once complete: a failed write (a full disk)
    # leaves no empty or half chart behind, and an older chart at `path` stays as it was.
    partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    try:
        fig.savefig(partial, dpi=dpi, bbox_inches="tight", format="png")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path
