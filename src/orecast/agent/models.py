"""Choosing the chat model from `ORECAST_MODEL` (or a `--model` flag).

Specs: `offline` (our rule-based analyst, no network), `deepseek:NAME` (DeepSeek's API or any
server at `DEEPSEEK_API_BASE`), `openai:NAME` (any OpenAI-compatible server: OpenAI, vLLM, Ollama,
llama.cpp …). Unset: DeepSeek when `DEEPSEEK_API_KEY` is present, else offline, so a fresh machine
works without a key. Every misconfiguration raises `AgentConfigError` with one readable line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from langchain_core.language_models import BaseChatModel

from orecast.agent.errors import AgentConfigError

DEFAULT_DEEPSEEK_MODEL = "deepseek-chat"
_DEEPSEEK_DEFAULT_BASE = "https://api.deepseek.com/v1"


def resolve_model_spec(spec: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The effective spec: the explicit one, else `ORECAST_MODEL`, else deepseek-if-keyed, else offline."""
    env = os.environ if env is None else env
    spec = (spec or env.get("ORECAST_MODEL") or "").strip()
    if spec:
        return spec
    if env.get("DEEPSEEK_API_KEY"):
        return f"deepseek:{DEFAULT_DEEPSEEK_MODEL}"
    return "offline"


def select_model(spec: str | None = None, env: Mapping[str, str] | None = None) -> BaseChatModel:
    """Build the chat model for `spec` (see module docstring); raises `AgentConfigError`."""
    env = os.environ if env is None else env
    spec = resolve_model_spec(spec, env)
    provider, _, name = spec.partition(":")
    provider = provider.lower()
    if provider == "offline" and not name:
        from orecast.agent.offline import OfflineAnalyst

        return OfflineAnalyst()
    if provider == "deepseek":
        return _deepseek(name or DEFAULT_DEEPSEEK_MODEL, env)
    if provider == "openai":
        if not name:
            raise AgentConfigError("model 'openai:' needs a model name, e.g. openai:qwen2.5:7b")
        return _openai(name, env)
    raise AgentConfigError(
        f"unknown model {spec!r}: use 'offline', 'deepseek:MODEL' or 'openai:MODEL' (ORECAST_MODEL / --model)"
    )


def _deepseek(name: str, env: Mapping[str, str]) -> BaseChatModel:
    from langchain_deepseek import ChatDeepSeek

    key = env.get("DEEPSEEK_API_KEY", "")
    base = env.get("DEEPSEEK_API_BASE") or _DEEPSEEK_DEFAULT_BASE
    if not key and base.rstrip("/") == _DEEPSEEK_DEFAULT_BASE:
        raise AgentConfigError(
            f"model 'deepseek:{name}' needs DEEPSEEK_API_KEY (or DEEPSEEK_API_BASE for a compatible server)"
        )
    # A placeholder key for keyless compatible servers: the SDK refuses an empty one.
    return ChatDeepSeek(
        model=name, api_key=key or "not-needed", base_url=base, temperature=0, streaming=True
    )


def _openai(name: str, env: Mapping[str, str]) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    key = env.get("OPENAI_API_KEY", "")
    base = env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_BASE") or None
    if not key and not base:
        raise AgentConfigError(
            f"model 'openai:{name}' needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"
        )
    # use_responses_api=False: local servers (vLLM, Ollama, llama.cpp) speak chat.completions only.
    return ChatOpenAI(
        model=name,
        api_key=key or "not-needed",
        base_url=base,
        temperature=0,
        streaming=True,
        use_responses_api=False,
    )
