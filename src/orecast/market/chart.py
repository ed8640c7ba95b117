"""Charts of a price history with its forecast fan: a PNG and an Apache ECharts `option` spec.

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

from orecast.market.fonts import cjk_font
from orecast.market.forecast import Forecast
from orecast.market.forecast import forecast as make_forecast
from orecast.market.loaders import DateLike, SeriesLike, load_series, meta_of
from orecast.market.util import iso, num

_BAND_COLOURS = {80: "#4c78a8", 95: "#9ecae9"}


@dataclass(frozen=True)
class Chart:
    """A chart of `history` and an optional forecast; `spec` is an ECharts option object."""

    title: str
    title_en: str
    history: pd.Series
    forecast: Forecast | None
    unit: str
    source: str
    lang: str = "en"  # "zh": Chinese title and labels in the PNG when a CJK font is installed
    name_zh: str = ""

    @property
    def spec(self) -> dict[str, object]:
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
) -> Chart:
    """History from `start` plus a forecast fan (given, or made when `horizon` is set).

    `lang="zh"` labels the PNG in Chinese when the machine has a CJK font (see `fonts.py`), else
    in English. Example: `chart("iron_ore_wb_monthly", horizon=6, start="2020", png="ore.png").spec`.
    """
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
        "title": {"text": title, "subtext": f"Source: {source}"},
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
    history: str
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
    if font is not None:
        suffix = f" — {ch.forecast.method} 预测" if ch.forecast is not None else ""
        return PngLabels(title=f"{ch.name_zh}{suffix}", history="历史", forecast="预测（{method}）",
                         interval="{level}% 区间", source=f"来源：{ch.source}", font=font)
    ascii_source = re.sub(r"[^\x00-\x7f]+", "", ch.source).replace("()", "").replace("  ", " ")
    return PngLabels(title=ch.title_en, history="history", forecast="forecast ({method})",
                     interval="{level}% interval", source=f"Source: {ascii_source}", font=None)


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
