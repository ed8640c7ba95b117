"""`orecast eval`: score a model on the bundled question set (answers computed from the data)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from orecast.agent import AgentConfigError, select_model
from orecast.agent.eval import Outcome, run_eval
from orecast.cli.common import fail


def eval_command(
    model: Annotated[str | None, typer.Option(
        help="offline, deepseek:MODEL or openai:MODEL (default: $ORECAST_MODEL, else DeepSeek "
             "when keyed, else offline).")] = None,
    lang: Annotated[str, typer.Option(help="zh, en or all.")] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Ask the evaluation questions (zh/en) and report pass/fail per question and a score.

    Example: orecast eval --model deepseek:deepseek-chat --lang zh
    """
    if lang not in ("zh", "en", "all"):
        fail(f"--lang must be zh, en or all; got {lang!r}", 2)
    try:
        chat = select_model(model)
    except AgentConfigError as exc:
        fail(str(exc), 2)

    def show(o: Outcome) -> None:
        if not as_json:
            mark = "PASS" if o.passed else "FAIL"
            typer.echo(f"{mark}  {o.lang}  {o.id:<20} {o.seconds:5.1f}s  {o.question}")
            if not o.passed:
                typer.echo(f"      expected: {o.expected or o.error}")

    outcomes = asyncio.run(run_eval(chat, lang=lang, on_result=show))
    passed = sum(o.passed for o in outcomes)
    score = passed / len(outcomes) if outcomes else 0.0
    if as_json:
        typer.echo(json.dumps({"model": model or "default", "lang": lang, "passed": passed,
                               "total": len(outcomes), "score": round(score, 3),
                               "results": [o.to_dict() for o in outcomes]},
                              ensure_ascii=False, indent=2))
    else:
        typer.echo(f"score: {passed}/{len(outcomes)} ({100 * score:.0f}%)")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
