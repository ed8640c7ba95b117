"""`OfflineAnalyst`: a LangChain chat model that needs no network and never invents numbers.

It reads the conversation (stateless: everything it knows is in the messages, so one instance
serves any number of threads and processes), plans tool calls with `planner.Planner`, and once
the results are back writes the answer with `compose`. It supports `bind_tools` (it only calls
tools it was given) and token streaming, so the deepagents graph, the CLI and the service treat
it exactly like DeepSeek or an OpenAI-compatible model.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from orecast.agent.market_errors import explain
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline import compose, convert, notes, targets
from orecast.agent.offline.intents import Query, parse
from orecast.agent.offline.planner import Context, Plan, Planner, context_of, question_of, restated
from orecast.agent.tools import MARKET_TOOLS

# Tools the planner knows by heart; anything else bound to the model counts as "extra" (MCP …).
_KNOWN = set(MARKET_TOOLS) | {
    "export_report", "task", "ls", "read_file", "write_file", "edit_file", "delete", "glob",
    "grep", "write_todos", "execute",
}
_TOKEN = re.compile(r"\s+|[A-Za-z0-9_.%$/+\-:()`*]+|[\u4e00-\u9fff]{1,2}|.", re.S)


class OfflineAnalyst(BaseChatModel):
    """Rule-based iron-ore analyst (`role="main"`) or quant specialist (`role="quant"`)."""

    role: str = "main"
    tool_schemas: dict[str, dict[str, Any]] = {}

    @property
    def _llm_type(self) -> str:
        return "orecast-offline-analyst"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"role": self.role}

    def as_role(self, role: str) -> OfflineAnalyst:
        return self.model_copy(update={"role": role})

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        schemas: dict[str, dict[str, Any]] = {}
        for t in tools:
            fn = convert_to_openai_tool(t)["function"]
            schemas[fn["name"]] = fn.get("parameters", {})
        return self.model_copy(update={"tool_schemas": schemas})

    # ---- deciding ---------------------------------------------------------------------

    def decide(self, messages: list[BaseMessage]) -> AIMessage:
        """The next message of the analyst for this conversation."""
        idx, q = question_of(messages)
        if q is None:
            return AIMessage(content="请提出一个关于铁矿石的问题。 / Please ask a question about iron ore.")
        after = messages[idx + 1 :]
        planner = Planner(
            set(self.tool_schemas) or set(_KNOWN),
            self.role,
            {n: s for n, s in self.tool_schemas.items() if n not in _KNOWN},
        )
        # Planning is deterministic, so the answer round re-plans to recover the notes.
        ctx = context_of(messages, idx)
        q = restated(q, ctx.questions)
        plan = _plan_parts(planner, q, ctx)
        results = [m for m in after if isinstance(m, ToolMessage)]
        if results and (write := _write_note(q, after)) is not None:
            return write
        if results:
            # "那一年前呢" asks again what the questions before it asked (a spread), on another day.
            # "那2024年呢" after "谁涨得多" asks the comparison again, over another period.
            again = (q.ago or q.follow_up and (q.start or q.relative)) and not q.series
            # "焦煤呢" after two periods compared: its two periods are compared as the question before asked.
            again = again or (q.follow_up and not q.intents and len(plan.calls) > 1)
            asked = "\n".join([*ctx.questions[-3:], q.text]) if again else q.text
            return AIMessage(content="\n\n".join([*plan.notes, self._answer(q, after, plan.focus, asked)]))
        calls = [(n, a) for n, a in plan.calls if not self.tool_schemas or n in self.tool_schemas]
        if calls:
            return AIMessage(
                content="",
                tool_calls=[
                    {"name": n, "args": a, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}
                    for n, a in calls
                ],
            )
        if plan.calls:  # planned tools that are not bound here (e.g. no export_report in quant)
            missing = ", ".join(sorted({n for n, _ in plan.calls}))
            return AIMessage(content=(f"这里没有可用的工具：{missing}。" if q.zh
                                      else f"The tools needed are not available here: {missing}."))
        return AIMessage(content="\n\n".join([*plan.notes, plan.reply or ""]).strip())

    def _answer(self, q: Query, after: list[BaseMessage], focus: dict[str, str], asked: str) -> str:
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for m in after:
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    calls[tc.get("id") or ""] = (tc["name"], dict(tc["args"]))
        results = [m for m in after if isinstance(m, ToolMessage)]
        parts: list[str] = []
        backtests: list[dict[str, Any]] = []
        for msg in results:
            name, args = calls.get(msg.tool_call_id, (msg.name or "", {}))
            if args.get("file_path") == notes.PREFERENCES:
                if name == "read_file":  # remembering reads the file first too; only a recall answers with it
                    if q.remember is None:
                        parts.append(notes.recalled(msg, q.zh))
                    continue
                if name == "write_file" and q.remember is not None and msg.status != "error":
                    parts.append(notes.remembered(q.remember, q.zh))
                    continue
            if msg.status == "error":
                parts.append(self._error(name, msg.text, q.zh))
                continue
            if name == "backtest_forecast":
                p = compose.payload_of(msg.text)
                if isinstance(p, dict):
                    backtests.append(p)
                    continue
            if name == "task":
                head = "量化子代理（quant）的结果：" if q.zh else "Result from the quant subagent:"
                parts.append(f"{head}\n{msg.text.strip()}")
                continue
            if name not in _KNOWN:
                head = f"工具 {name} 返回：" if q.zh else f"Tool {name} returned:"
                parts.append(f"{head}\n{_plain(msg.content)}")
                continue
            parts.append(compose.render(name, msg.text, q.zh, seasonal="seasonal" in q.intents,
                                        focus=focus.get(str(args.get("series"))),
                                        average=q.asks_average, why_wide=q.asks_band_why,
                                        moves=q.moves, high_low=q.high_low))
        parts.extend(_comparisons(q, results, calls, asked))
        if q.asks_average and (blended := _blended_average(q, results, calls)):
            parts.append(blended)
        if q.annualised:
            parts.extend(compose.annualised(p, q.zh) for m in results
                         if calls.get(m.tool_call_id, ("", {}))[0] == "price_history"
                         and isinstance(p := compose.payload_of(m.text), dict))
        if q.certainty and not q.target_level:
            parts.extend(targets.direction_chance(q.certainty, p, q.zh) for m in results
                         if calls.get(m.tool_call_id, ("", {}))[0] == "forecast_price"
                         and isinstance(p := compose.payload_of(m.text), dict))
        if q.whole_year:
            parts.extend(targets.year_direction(p, q.zh) for m in results
                         if calls.get(m.tool_call_id, ("", {}))[0] == "forecast_price"
                         and isinstance(p := compose.payload_of(m.text), dict))
        if q.pct_move is not None:
            parts.extend(compose.pct_move(p, q.pct_move, q.zh) for m in results
                         if calls.get(m.tool_call_id, ("", {}))[0] == "latest_price"
                         and isinstance(p := compose.payload_of(m.text), dict))
        parts[:0] = _level_notes(q, results, calls)
        if q.target_level:
            parts.extend(targets.target_check(q.target_level, q.level_direction, p, q.text, q.zh, q.level_state)
                         for m in results if calls.get(m.tool_call_id, ("", {}))[0] == "forecast_price"
                         and isinstance(p := compose.payload_of(m.text), dict))
        if (amount := convert.asked(q.text)) is not None:
            parts.extend(convert.answer(amount, p, q.text, q.zh) for m in results
                         if calls.get(m.tool_call_id, ("", {}))[0] == "latest_price"
                         and isinstance(p := compose.payload_of(m.text), dict) and p.get("series") == "usd_cnh_daily")
        elif convert.latest_to_convert(q.text, q.series or [  # "换成美元是多少" after a price: the price asked
                str(a.get("series")) for n, a in calls.values() if n == "latest_price" and a.get("series") != "usd_cnh_daily"]):
            found = {p.get("series"): p for m in results if isinstance(p := compose.payload_of(m.text), dict)}
            fx = found.pop("usd_cnh_daily", None)
            parts.extend(convert.latest_answer(p, fx, q.text, q.zh) for p in found.values() if fx)
        elif q.claim and not q.scenario:
            parts.extend(compose.claim_check(claim, p, q.zh) for m in results
                         if calls.get(m.tool_call_id, ("", {}))[0] == "latest_price"
                         and isinstance(p := compose.payload_of(m.text), dict) for claim in q.claims)
        methods = {b.get("method") for b in backtests}
        series = {b.get("series") for b in backtests}
        if len(backtests) > 1 and len(series) == 1 and len(methods) == len(backtests):
            parts.insert(0, compose.method_ranking(backtests, q.zh))
        else:
            parts[:0] = [compose.backtest(b, q.zh) for b in backtests]
            if len(series) > 1 and (which := compose.series_reliability(backtests, q.zh)):
                parts.insert(0, which)  # "which forecast is more reliable?" after two series' forecasts
        return "\n\n".join(p for p in parts if p)

    def _error(self, name: str, text: str, zh: bool) -> str:
        if name == "export_report" and "reject" in text.lower():
            reason = text.split("reason:", 1)[1].strip() if "reason:" in text else ""
            why = f"（原因：{reason}）" if zh and reason else f" (reason: {reason})" if reason else ""
            return f"报告没有导出：已被拒绝{why}。" if zh else f"The report was not exported: it was rejected{why}."
        explained = explain(text, zh)
        if explained is not None:
            return (f"这个请求无法完成：{explained}" if zh
                    else f"That request could not be completed: {explained}")
        return f"工具 {name} 出错：{text.strip()}" if zh else f"Tool {name} failed: {text.strip()}"

    # ---- LangChain chat-model interface -----------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.decide(messages))])

    def _chunks(self, messages: list[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        """The next message as a real model streams it: tool calls whole, text token by token."""
        msg = self.decide(messages)
        if msg.tool_calls:
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {"name": tc["name"], "args": json.dumps(tc["args"], ensure_ascii=False),
                         "id": tc["id"], "index": i, "type": "tool_call_chunk"}
                        for i, tc in enumerate(msg.tool_calls)
                    ],
                    chunk_position="last",
                )
            )
            return
        tokens = _TOKEN.findall(msg.text) or [""]
        for i, tok in enumerate(tokens):
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=tok, chunk_position="last" if i == len(tokens) - 1 else None
                )
            )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            if run_manager and chunk.text:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        # Planning is pure CPU and fast; the answer then streams on the event loop itself,
        # yielding control between tokens like a network model would.
        for chunk in self._chunks(messages):
            if run_manager and chunk.text:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk
            await asyncio.sleep(0)


# "Which is more volatile / rose more?", "the spread": a line that answers it from two results.
_COMPARED = (
    ("describe_series", r"volatil|波动", lambda ps, zh, _: compose.volatility_ranking(ps, zh)),
    # "螺纹钢和焦炭的相关性比铁矿石高吗": two correlations of one series, ranked.
    ("relate_series", r"比|than|higher|lower|stronger|weaker|更", lambda ps, zh, _: compose.relations_compared(ps, zh)),
    # "热卷利润是不是比螺纹钢利润高": the two margins' latest values on their dates, and the difference.
    ("mill_margin", r".", lambda ps, zh, _: compose.margins_compared(ps, zh)),
    # "2024年四季度和2025年四季度均价比较": one series over two periods, means and change between them.
    ("describe_series", r"均价|平均|均值|average|mean|比较|对比|compare|vs|哪个|哪一?年|更高|更低|[和跟与].{0,8}比|"
                        r"\bwhich (?:year|month|quarter|period)\b",
     lambda ps, zh, _: compose.period_means(ps, zh)),
    ("price_history", r"which|more|better|compare|哪个|谁|更|对比|比较", compose.change_ranking),
    ("latest_price", r"价差|差价|相差|差多少|差了多少|差距|贵多少|便宜多少|高多少|低多少|spread|difference|gap between",
     lambda ps, zh, _: compose.spread(*ps, zh) if len(ps) == 2 else ""),
    # "今年以来螺纹钢和热卷的价差变化": the spread at the period's start and end, when both have them.
    ("price_history", r"价差|差价|spread", lambda ps, zh, _: compose.spread_change(*ps, zh) if len(ps) == 2 else ""),
    ("price_history", r"比价|价格比|比值|\bratio\b",
     lambda ps, zh, _: compose.spread_change(*ps, zh, ratio=True) if len(ps) == 2 else ""),
    ("price_history", r"价差|差价|相差|spread|difference|gap between",
     lambda ps, zh, _: compose.dated_spread(*ps, zh) if len(ps) == 2 else ""),
    ("latest_price", r"比价|价格比|比值|\bratio\b", lambda ps, zh, _: compose.ratio(*ps, zh) if len(ps) == 2 else ""),
    # "哪个跌得多，铁矿石期货还是螺纹钢？" with no period: each one's change over its last year.
    ("latest_price", r"(?:跌|涨)(?:得|幅)|(?:fell|rose|dropped|gained|declined)\s+(?:the\s+)?(?:more|most)",
     lambda ps, zh, asked: compose.yearly_ranking(ps, zh, asked)),
)


def _comparisons(q: Query, results: list[ToolMessage], calls: dict[str, tuple[str, dict[str, Any]]],
                 asked: str) -> list[str]:
    """What the results compared say (a spread, a ranking …) when `asked` (the question, and for
    "那一年前呢" the one it follows) asks for it."""
    out = []
    for tool, asks, answer in _COMPARED:
        payloads = [p for m in results if calls.get(m.tool_call_id, ("", {}))[0] == tool
                    and isinstance(p := compose.payload_of(m.text), dict)]
        if len(payloads) > 1 and re.search(asks, asked, re.I):
            out.append(answer(payloads, q.zh, asked))
    return out


def _blended_average(q: Query, results: list[ToolMessage], calls: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """"2026年均价预计多少" on data to May: the period's average is the actual periods' values and the
    forecast medians of the rest, together (its band: the actual part fixed, the rest's bounds averaged)."""
    payloads = {calls.get(m.tool_call_id, ("", {}))[0]: p for m in results
                if isinstance(p := compose.payload_of(m.text), dict)}
    known, fc = payloads.get("describe_series"), payloads.get("forecast_price")
    if not known or not fc or known.get("series") != fc.get("series") or not q.start:
        return ""
    return compose.blended_average(known, fc, q.end or q.start, q.zh)


def _level_notes(q: Query, results: list[ToolMessage], calls: dict[str, tuple[str, dict[str, Any]]]) -> list[str]:
    """"涨到 700" when the latest value is 707: said to be a fall, before the scenario or forecast."""
    out = []
    for m in results:
        name = calls.get(m.tool_call_id, ("", {}))[0]
        p = compose.payload_of(m.text)
        if not isinstance(p, dict):
            continue
        if name == "price_scenario" and q.scenario_level and isinstance(p.get("level"), int | float):
            unit = str(p.get("driver_unit", ""))
            out.append(targets.direction_check(
                q.level_direction, p["level"], p.get("driver_base") or {},
                compose.UNIT_ZH.get(unit, unit) if q.zh else unit,
                str(p.get("driver_name_zh" if q.zh else "driver_name_en")), q.zh, scenario=True))
        elif name == "forecast_price" and q.target_level:
            lp = compose.localise(p, q.zh)
            out.append(targets.direction_check(q.level_direction, q.target_level[0], p.get("last") or {},
                                               str(lp.get("unit", "")), compose._name(lp, q.zh), q.zh,
                                               scenario=False))
    return [n for n in out if n]


def _write_note(q: Query, after: list[BaseMessage]) -> AIMessage | None:
    """Remembering's second round: the notes file as read, written back with the new note."""
    if q.remember is None:
        return None
    results = {m.tool_call_id: m for m in after if isinstance(m, ToolMessage)}
    calls = [tc for m in after if isinstance(m, AIMessage) for tc in m.tool_calls]
    if any(tc["name"] == "write_file" for tc in calls):
        return None
    read = next((results.get(tc["id"] or "") for tc in calls
                 if tc["name"] == "read_file" and tc["args"].get("file_path") == notes.PREFERENCES), None)
    if read is None:
        return None
    return AIMessage(content="", tool_calls=[{
        "name": "write_file",
        "args": {"file_path": notes.PREFERENCES, "content": notes.with_note(read, q.remember)},
        "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call",
    }])


# "…的相关性，再预测…", "…; then forecast …", "…相关性？PMI…": one message asking for several
# things. Only explicit connectors and question marks split it (a bare comma does not), so
# "铁矿石，未来3个月怎么看" stays one question.
_PARTS = re.compile(
    r"\s*(?:[，,；;。]\s*(?:然后|再|并且|同时|另外|以及|还有)|然后|并且|同时再|另外再"
    r"|[,;]\s*(?:and\s+)?(?:then|also)\b|\band then\b|;|[？?](?=\s*\S))\s*",
    re.I,
)


# "X, and Y" or "X and how/what/is … Y": a second question only when Y asks something of its own
# (see `_asks`), so "iron ore, rebar, and coke prices" stays one list.
_WEAK = re.compile(
    r"(\s*[,;]\s*and\s+|\s+and\s+(?=(?:what|what's|how|which|when|why|where|who|is|are|was|"
    r"were|does|do|did|can|could|will|would|should)\b))",
    re.I,
)
_QUESTION_WORD = re.compile(
    r"^\s*(?:what|what's|how|which|when|why|where|who|is|are|was|were|does|do|did|can|could|"
    r"will|would|should|tell|show|give)\b", re.I)


def _asks(text: str, q: Query) -> bool:
    """A clause that asks something itself: a question word, an intent, a scenario, memory."""
    return bool(_QUESTION_WORD.match(text) or q.intents or q.scenario or q.scenario_unsupported
                or q.missing or q.asks_name or q.asks_past or q.asks_role or q.asks_memory)


def _weak_split(raw: str, known: set[str]) -> list[str]:
    """Split `raw` at English "and" connectors where both sides ask something of their own."""
    pieces = _WEAK.split(raw)
    out = [pieces[0]]
    for sep, piece in zip(pieces[1::2], pieces[2::2], strict=True):
        if _asks(piece, parse(piece, known)) and _asks(out[-1], parse(out[-1], known)):
            out.append(piece)
        else:
            out[-1] = f"{out[-1]}{sep}{piece}"
    return out


def _stands_alone(q: Query) -> bool:
    """A part with its own subject; "提前20个交易日" only qualifies the part before it."""
    return bool(q.intents or q.series or q.scenario or q.scenario_unsupported or q.missing
                or q.name or q.role or q.asks_name or q.asks_past or q.asks_role or q.asks_memory)


def _plan_parts(planner: Planner, q: Query, ctx: Context) -> Plan:
    """Plan each part of a several-part question and ask for all their tools at once.

    A later part may lean on an earlier one ("…then forecast it"), so each part sees the series of
    the part before it. A part that needs no tool (a memory question, data we do not have) is
    answered in the notes; one nothing can answer is named, never dropped.
    """
    if q.remember:  # all that follows "remember:" is the note
        return planner.plan(q, ctx)
    known = set(cat.catalogue())
    parts: list[str] = []
    pieces = [] if q.zh else [p for raw in _PARTS.split(q.text) if raw for p in _weak_split(raw, known)]
    for raw in pieces if not q.zh else _PARTS.split(q.text):
        if not raw or len(raw.strip()) <= 1:
            continue
        if parts and not _stands_alone(parse(raw, known)):
            parts[-1] = f"{parts[-1]}，{raw}" if q.zh else f"{parts[-1]}, {raw}"
        else:
            parts.append(raw)
    if len(parts) < 2:
        return planner.plan(q, ctx)
    calls: list[tuple[str, dict[str, Any]]] = []
    notes: list[str] = []
    focus: dict[str, str] = {}
    for part in parts:
        part_q = parse(part, known)
        part_q.zh = q.zh
        plan = planner.plan(part_q, ctx)
        notes.extend(n for n in plan.notes if n not in notes)
        focus.update(plan.focus)
        if not plan.calls:
            if not plan.in_scope:
                notes.append(f"关于“{part.strip()}”：这部分超出了我的数据范围，我无法回答。" if q.zh
                             else f"On \"{part.strip()}\": this part is outside my data; I cannot answer it.")
            elif plan.reply:
                notes.append(plan.reply)
            continue
        for call in plan.calls:
            if call not in calls:
                calls.append(call)
        name, args = plan.calls[-1]
        series = args.get("series") or args.get("a")
        ctx = replace(ctx, last_call=(name, args), last_series=series if isinstance(series, str) else ctx.last_series)
    if not calls:
        return Plan(reply="\n\n".join(notes))
    return Plan(calls=calls, notes=notes, focus=focus)


def _plain(content: Any) -> str:
    """MCP tools answer with content blocks; keep their text."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") if isinstance(b, dict) else str(b) for b in content
        ).strip()
    return str(content)
