"""`orecast eval`: the same questions, with answers computed from the data, for any model."""

from __future__ import annotations

from orecast.agent.eval.questions import QUESTIONS, Question
from orecast.agent.eval.runner import Outcome, run_eval

__all__ = ["QUESTIONS", "Outcome", "Question", "run_eval"]
