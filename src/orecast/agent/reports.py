"""`export_report`: the thread's analysis as a Markdown file, with its charts copied alongside.

The report is built from the conversation itself (questions, final answers, the sources and the
charts the tools produced), so it contains only what the user has already seen — the model adds a
title and an optional summary. The tool is sensitive (it writes to disk), so `build_agent` puts it
behind `interrupt_on`: a human approves, edits (title/summary/file name) or rejects it.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

REPORT_TOOL = "export_report"
NOTHING_ANSWERED = "_本对话还没有已回答的问题。 / No question of this conversation has been answered yet._"
# A report asked for with an empty title (a model's call, or an approval edited to one) was headed
# "# " and named "-<thread>.md": it takes the conversation's first question, else this.
UNTITLED = "未命名对话 / Untitled conversation"
TITLE_CHARS = 80  # as a conversation's title is cut (web/src/lib/title.ts, cli/runs.py)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One user question and the answer the agent gave to it."""

    question: str
    answer: str


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart a tool drew: its PNG (copied beside the report) and its ECharts option file, which
    only the web page reads."""

    png: Path
    option: str | None


def collect(messages: list[BaseMessage]) -> tuple[list[Exchange], list[Chart], list[str]]:
    """Questions with their final answers, chart PNGs and data sources found in the thread.

    A final answer is the analyst's text without a tool call: a preface to one ("let me export it")
    answers nothing, so the question that asked for the report being written is not in it, nor are
    earlier requests for a report (their answer is only where a file went)."""
    exchanges: list[Exchange] = []
    charts: list[Chart] = []
    sources: list[str] = []
    question: str | None = None
    answer = ""
    exported = False
    for msg in messages:
        if isinstance(msg, HumanMessage):
            if question is not None and answer and not exported:
                exchanges.append(Exchange(question, answer))
            question, answer, exported = msg.text, "", False
        elif isinstance(msg, AIMessage):
            exported = exported or any(call["name"] == REPORT_TOOL for call in msg.tool_calls)
            if not msg.tool_calls and msg.text.strip():
                answer = msg.text.strip()
        elif isinstance(msg, ToolMessage) and msg.status != "error":
            payload = _json(msg.text)
            if isinstance(payload, dict):
                png, option = payload.get("png"), payload.get("echarts")
                if isinstance(png, str) and png not in {str(c.png) for c in charts}:
                    charts.append(Chart(Path(png), option if isinstance(option, str) else None))
                for src in _sources(payload):
                    if src not in sources:
                        sources.append(src)
    if question is not None and answer and not exported:
        exchanges.append(Exchange(question, answer))
    return exchanges, charts, sources


def _sources(payload: Any) -> list[str]:
    found: list[str] = []
    if isinstance(payload, dict):
        for key, value in payload.items():
            if key == "source" and isinstance(value, str):
                found.append(value)
            else:
                found.extend(_sources(value))
    elif isinstance(payload, list):
        for item in payload:
            found.extend(_sources(item))
    return found


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def report_title(title: str, messages: list[BaseMessage]) -> str:
    """The report's title: the one asked for, else the first question on one line, else `UNTITLED`."""
    if title.strip():
        return title.strip()
    first = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
    text = " ".join(first.split())
    if len(text) > TITLE_CHARS:
        text = text[: TITLE_CHARS - 1] + "…"
    return text or UNTITLED


def render(title: str, summary: str, thread_id: str, messages: list[BaseMessage], figures_dir: Path) -> str:
    """The Markdown text; chart PNGs are copied into `figures_dir` and linked relatively."""
    exchanges, charts, sources = collect(messages)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# {title}", "", f"*orecast · thread `{thread_id}` · {now}*", ""]
    if summary.strip():
        lines += ["## 摘要 / Summary", "", summary.strip(), ""]
    copied = [c for c in charts if c.png.is_file()]
    lines += ["## 问答 / Analysis", ""]
    for ex in exchanges:
        lines += [f"### {ex.question.strip()}", "", _as_reported(ex.answer, copied, figures_dir), ""]
    if not exchanges:
        lines += [NOTHING_ANSWERED, ""]
    if copied:
        figures_dir.mkdir(parents=True, exist_ok=True)
        lines += ["## 图表 / Figures", ""]
        for chart in copied:
            target = figures_dir / chart.png.name
            shutil.copyfile(chart.png, target)
            lines += [f"![{chart.png.stem}]({figures_dir.name}/{chart.png.name})", ""]
    if sources:
        lines += ["## 数据来源 / Sources", ""] + [f"- {s}" for s in sources] + [""]
    lines += [
        "---",
        "统计基线不包含政策、天气与突发事件；所有预测均为区间，请结合风险判断。",
        "Statistical baselines ignore policy, weather and shocks; every forecast is a range.",
        "",
    ]
    return "\n".join(lines)


# Text left on a line once a chart's files are named no more, above which it says more than where
# they are (the page's rule too: web/src/lib/chartCaption.ts).
NOTICE_CHARS = 120


def _as_reported(answer: str, charts: list[Chart], figures_dir: Path) -> str:
    """An answer names the server's chart files: in the report a PNG is named by its copy beside it,
    and a line that only points the web page at an ECharts option file goes (the figure is there)."""
    kept: list[str] = []
    for line in answer.split("\n"):
        options = [c.option for c in charts if c.option and c.option in line]
        rest = line
        for chart in charts:
            rest = rest.replace(str(chart.png), "").replace(chart.option or str(chart.png), "")
        if options and len(rest.strip(" `")) <= NOTICE_CHARS:
            continue
        for chart in charts:
            line = line.replace(str(chart.png), f"{figures_dir.name}/{chart.png.name}")
        kept.append(line)
    return "\n".join(kept)


def _slug(text: str) -> str:
    slug = re.sub(r"[^\w\-]+", "-", text.strip(), flags=re.UNICODE).strip("-").lower()
    return slug[:60] or "report"


def report_tool(reports_dir: Path) -> BaseTool:
    """The `export_report` tool writing under `reports_dir`."""

    def export_report(
        title: str, runtime: ToolRuntime, summary: str = "", filename: str = ""
    ) -> str:
        """Export this conversation's analysis (answers, charts, sources) as a Markdown report.

        Needs human approval. `title`: report title; `summary`: optional executive summary
        written from the answers already given; `filename`: optional file name (no directory).
        """
        thread_id = str(runtime.config.get("configurable", {}).get("thread_id", "thread"))
        messages = list(runtime.state.get("messages", []))
        title = report_title(title, messages)
        stem = _slug(Path(filename).stem if filename else f"{title}-{thread_id[:8]}")
        reports_dir.mkdir(parents=True, exist_ok=True)
        path = reports_dir / f"{stem}.md"
        text = render(title, summary, thread_id, messages, reports_dir / f"{stem}_figures")
        path.write_text(text, encoding="utf-8")
        exchanges, charts, _ = collect(messages)
        return json.dumps(
            {
                "report": str(path),
                "title": title,
                "sections": len(exchanges),
                "figures": len([c for c in charts if c.png.is_file()]),
                "bytes": len(text.encode("utf-8")),
            },
            ensure_ascii=False,
        )

    return StructuredTool.from_function(export_report, name=REPORT_TOOL)
