"""Running the question set against one model: a fresh in-memory thread per question."""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from orecast.agent.build import build_agent
from orecast.agent.eval.questions import QUESTIONS, Question
from orecast.agent.events import Token, stream_turn
from orecast.agent.settings import AgentSettings


@dataclass(frozen=True, slots=True)
class Outcome:
    id: str
    lang: str
    question: str
    passed: bool
    expected: str
    answer: str
    seconds: float
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "lang": self.lang, "question": self.question, "passed": self.passed,
                "expected": self.expected, "answer": self.answer, "seconds": round(self.seconds, 2),
                "error": self.error}


async def run_eval(
    model: BaseChatModel | str | None,
    *,
    lang: str = "all",
    questions: Sequence[Question] = QUESTIONS,
    on_result: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Ask every question of `lang` ("zh", "en" or "all") and check each final answer."""
    chosen = [q for q in questions if lang == "all" or q.lang == lang]
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="orecast-eval-") as tmp:
        settings = AgentSettings.from_env(charts_dir=Path(tmp) / "charts",
                                          reports_dir=Path(tmp) / "reports")
        agent = build_agent(InMemorySaver(), model=model, settings=settings)
        for q in chosen:
            thread = str(uuid.uuid4())
            began = time.monotonic()
            answer, error = "", None
            try:
                for turn in q.turns:
                    answer = ""
                    async for event in stream_turn(agent, thread, turn):
                        if isinstance(event, Token):
                            answer += event.text
                passed, expected = q.check(answer)
            except Exception as exc:  # a model or network failure fails this question only
                passed, expected, error = False, "", f"{type(exc).__name__}: {exc}"
            outcome = Outcome(q.id, q.lang, q.text, passed, expected, answer.strip(),
                              time.monotonic() - began, error)
            outcomes.append(outcome)
            if on_result:
                on_result(outcome)
    return outcomes
