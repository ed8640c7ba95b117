/** Tool calls of an assistant turn paired with their results, and what the page shows of them. */
import { textOf } from "../api";
import { chartRefOf, type ChartRef } from "./chartCaption";
import { chartSpecOf, type Spec } from "./chartOption";

export interface ToolCallLike {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ToolResultLike {
  type: "tool";
  tool_call_id: string;
  content: unknown;
  status?: string;
  artifact?: unknown;
  name?: string;
  additional_kwargs?: { lc_data?: { decision?: string } };
}

export interface ToolRun {
  call: ToolCallLike;
  result?: ToolResultLike;
  chart: Spec | null;
  report: string | null;
  failed: boolean;
  /** A reviewer rejected the call (HumanInTheLoopMiddleware marks its answer `lc_data.decision`). */
  rejected: boolean;
  /** The call never ran: its run was stopped, or a new question came while it awaited approval. */
  cancelled: boolean;
}

/**
 * deepagents' PatchToolCallsMiddleware answers a call left without a result (the run was stopped,
 * or the next question came while it waited for approval) with an error of this wording.
 */
const NEVER_RAN = /^Tool call \S+ with id \S+ did not complete - no result was recorded\./;

/** Each call with its result (matched by tool_call_id), its chart and its report file. */
export function pairToolRuns(calls: ToolCallLike[], results: ToolResultLike[]): ToolRun[] {
  return calls.map((call) => {
    const result = results.find((r) => r.tool_call_id === call.id);
    const failed = result?.status === "error";
    return {
      call,
      result,
      failed,
      rejected: result?.additional_kwargs?.lc_data?.decision === "reject",
      cancelled: failed && NEVER_RAN.test(textOf(result?.content)),
      chart: result && !failed ? chartSpecOf(result.artifact) : null,
      report: result && !failed && call.name === "export_report" ? reportPath(textOf(result.content)) : null,
    };
  });
}

/** The charts among a turn's results that the page draws inline (a successful result with its spec). */
export function drawnCharts(results: ToolResultLike[]): ChartRef[] {
  return results
    .filter((r) => r.status !== "error" && chartSpecOf(r.artifact))
    .map((r) => chartRefOf(textOf(r.content)))
    .filter((r): r is ChartRef => r !== null);
}

/** `text` with the server paths of the turn's exported reports cut to their file names (the link above downloads them). */
export function hideReportPaths(text: string, results: ToolResultLike[]): string {
  for (const r of results) {
    const path = r.name === "export_report" && r.status !== "error" ? reportPath(textOf(r.content)) : null;
    if (path) text = text.split(path).join(path.split(/[\\/]/).pop() ?? path);
  }
  return text;
}

/**
 * The `report` path of an export_report result. An edited call's result starts with the
 * middleware's notice (which quotes the executed arguments) and ends with the tool's JSON, so
 * the JSON is looked for at the start of each line.
 */
export function reportPath(text: string): string | null {
  for (let i = text.indexOf("{"); i >= 0; i = text.indexOf("{", i + 1)) {
    if (i > 0 && text[i - 1] !== "\n") continue;
    try {
      const parsed = JSON.parse(text.slice(i)) as { report?: unknown };
      if (typeof parsed.report === "string") return parsed.report;
    } catch {
      // not this one
    }
  }
  return null;
}

/** Result text for display: pretty JSON when it is JSON. */
export function prettyResult(content: unknown): string {
  const text = textOf(content);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
