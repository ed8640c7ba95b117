"""PNG charts in the user's language: Chinese labels when a CJK font is installed, English otherwise
(matplotlib's own fonts would draw Chinese as empty boxes)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from orecast.market import chart, forecast
from orecast.market.chart import png_labels
from orecast.market.fonts import cjk_font


def _glyph_warnings(ch, path: Path) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ch.save_png(path)
    assert path.stat().st_size > 10_000
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_without_a_cjk_font_a_chinese_chart_falls_back_to_english(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ORECAST_CJK_FONT", "none")
    fc = forecast("iron_ore_wb_monthly", 3, "naive")
    ch = chart("iron_ore_wb_monthly", forecast=fc, start="2024", lang="zh")
    words = png_labels(ch)
    assert words.font is None and words.title == ch.title_en and words.history == "history"
    assert _glyph_warnings(ch, tmp_path / "en.png") == []


def test_with_a_cjk_font_a_chinese_chart_is_labelled_in_chinese(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("ORECAST_CJK_FONT", raising=False)
    if cjk_font() is None:
        pytest.skip("no CJK font on this machine (Debian: fonts-noto-cjk or fonts-wqy-microhei)")
    fc = forecast("iron_ore_wb_monthly", 3, "naive")
    zh = chart("iron_ore_wb_monthly", forecast=fc, start="2024", lang="zh")
    words = png_labels(zh)
    assert words.title == "铁矿石价格（世界银行，CFR中国） — naive 预测"
    assert (
        words.history == "历史"
        and words.source == "来源：世界银行大宗商品价格数据（Pink Sheet，月度）"
    )
    assert _glyph_warnings(zh, tmp_path / "zh.png") == []
    # An English question keeps English labels, font or not.
    en = chart("iron_ore_wb_monthly", forecast=fc, start="2024")
    assert png_labels(en).title == en.title_en and png_labels(en).font is None


def test_the_chart_spec_names_its_source_in_both_languages() -> None:
    """The page shows the source line in its language: the spec carries it in Chinese too."""
    title = chart("iron_ore_wb_monthly", start="2024").spec["title"]
    assert title["subtext"].startswith("Source: World Bank Commodity Price Data")
    assert title["subtext_zh"] == "来源：世界银行大宗商品价格数据（Pink Sheet，月度）"
    both = chart("iron_ore_wb_monthly", compare="shfe_rebar_daily", start="2024").spec["title"]
    assert both["subtext_zh"].startswith(
        "来源：世界银行大宗商品价格数据（Pink Sheet，月度）；上期所日度行情"
    )
