"""The chart tool labels its PNG in the language of the question being answered."""

from __future__ import annotations

import json
from typing import Any

import pytest

from orecast.market.fonts import cjk_font
from tests.agent.conftest import run_turn


@pytest.mark.parametrize(("question", "language"), [
    ("画出螺纹钢2024年以来的走势图", "zh"),
    ("Plot iron ore since 2020", "en"),
])
async def test_png_language_follows_the_question(agent: Any, thread_id: str, question: str,
                                                 language: str, monkeypatch) -> None:
    monkeypatch.delenv("ORECAST_CJK_FONT", raising=False)
    if language == "zh" and cjk_font() is None:
        pytest.skip("no CJK font on this machine (Debian: fonts-noto-cjk or fonts-wqy-microhei)")
    turn = await run_turn(agent, thread_id, question)
    result = next(r for r in turn.results if r.name == "make_chart")
    assert result.ok and json.loads(result.content)["png_language"] == language
