"""`orecast eval` with the offline analyst: every question passes, and bad input is one line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from orecast.agent.eval.questions import QUESTIONS, has_number
from orecast.cli.main import app


def test_the_question_set_is_bilingual() -> None:
    ids = {q.id for q in QUESTIONS}
    for qid in ids:
        assert {q.lang for q in QUESTIONS if q.id == qid} == {"zh", "en"}


def test_checks_compute_their_answers_and_fail_a_wrong_one() -> None:
    by_id = {(q.id, q.lang): q for q in QUESTIONS}
    ok, expected = by_id[("last-year-average", "en")].check("The whole-history mean is 108.64.")
    assert not ok and "average" in expected
    assert not by_id[("no-inventory-data", "zh")].check("港口库存约为 108.64")[0]
    assert has_number("price 1,234.5 CNY/t", 1234.5)


@pytest.mark.slow
def test_eval_offline_scores_every_question(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2026-11-30")
    result = CliRunner().invoke(app, ["eval", "--model", "offline", "--lang", "all", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["total"] == len(QUESTIONS)
    failed = [r for r in report["results"] if not r["passed"]]
    assert not failed, failed
    assert report["score"] == 1.0


def test_bad_lang_and_model_are_one_line() -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["eval", "--lang", "fr"])
    assert bad.exit_code == 2 and "--lang must be zh, en or all" in bad.output
    model = runner.invoke(app, ["eval", "--model", "nosuch:x"])
    assert model.exit_code == 2 and "unknown model" in model.output


async def test_eval_scores_a_real_model_over_http() -> None:
    """The same questions through ChatOpenAI: the scripted model answers every question with the
    World Bank price, so it fails both checks below — the evaluation tells the models apart."""
    from orecast.agent import select_model
    from orecast.agent.eval import run_eval
    from tests.agent.scripted_openai_server import ScriptedServer

    chosen = [q for q in QUESTIONS if q.lang == "en" and q.id in ("latest-futures", "no-inventory-data")]
    with ScriptedServer() as server:
        model = select_model("openai:scripted", {"OPENAI_API_KEY": "sk-local-test",
                                                 "OPENAI_BASE_URL": server.base_url})
        outcomes = await run_eval(model, lang="en", questions=chosen)
    assert [o.id for o in outcomes] == ["latest-futures", "no-inventory-data"]
    assert all(o.error is None and "iron ore price is" in o.answer for o in outcomes)
    assert [o.passed for o in outcomes] == [False, False]
