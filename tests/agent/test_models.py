"""Model selection from ORECAST_MODEL / --model: the right class, or one clear line."""

from __future__ import annotations

import pytest
from langchain_deepseek import ChatDeepSeek
from langchain_openai import ChatOpenAI

from orecast.agent import AgentConfigError, resolve_model_spec, select_model
from orecast.agent.offline import OfflineAnalyst


def test_fresh_machine_without_keys_gets_the_offline_analyst() -> None:
    assert resolve_model_spec(None, {}) == "offline"
    assert isinstance(select_model(None, {}), OfflineAnalyst)


def test_a_deepseek_key_selects_deepseek_by_default() -> None:
    env = {"DEEPSEEK_API_KEY": "sk-test"}
    assert resolve_model_spec(None, env) == "deepseek:deepseek-chat"
    model = select_model(None, env)
    assert isinstance(model, ChatDeepSeek)
    assert model.model_name == "deepseek-chat"


def test_orecast_model_wins_over_the_deepseek_key() -> None:
    env = {"DEEPSEEK_API_KEY": "sk-test", "ORECAST_MODEL": "offline"}
    assert isinstance(select_model(None, env), OfflineAnalyst)


def test_openai_compatible_server_uses_chat_completions() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}
    model = select_model("openai:qwen2.5:7b", env)
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "qwen2.5:7b"
    assert model.openai_api_base == "http://127.0.0.1:11434/v1"
    assert model.use_responses_api is False


def test_deepseek_with_a_compatible_base_needs_no_key() -> None:
    model = select_model("deepseek:deepseek-chat", {"DEEPSEEK_API_BASE": "http://127.0.0.1:9/v1"})
    assert isinstance(model, ChatDeepSeek)


@pytest.mark.parametrize(
    ("spec", "env", "needle"),
    [
        ("deepseek:deepseek-chat", {}, "DEEPSEEK_API_KEY"),
        ("openai:gpt-4o-mini", {}, "OPENAI_API_KEY"),
        ("openai:", {}, "model name"),
        ("claude", {}, "unknown model"),
    ],
)
def test_misconfiguration_is_one_clear_line(spec: str, env: dict[str, str], needle: str) -> None:
    with pytest.raises(AgentConfigError) as info:
        select_model(spec, env)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message
