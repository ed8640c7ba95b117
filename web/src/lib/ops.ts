/**
 * The operations view's figures (`GET /ops/stats`, see docs/operations.md) and the ECharts options
 * drawn from them. Fields that a server may not send yet (p50/p95, recent failures, the sweep) are
 * optional: the page shows "—" for them.
 */

export interface ToolStat {
  tool: string;
  calls: number;
  errors: number;
  pending?: number;
  error_rate: number;
  p50_ms?: number | null;
  p95_ms?: number | null;
}

export interface FailedCall {
  thread_id: string;
  checkpoint_ns?: string | null;
  checkpoint_id?: string | null;
  run_id?: string | null;
  tool: string;
  status?: string | null;
  error?: string | null;
  started_at?: string | null;
}

export interface DayGrowth {
  day: string;
  checkpoints: number;
  turns: number;
  bytes: number;
}

export interface SweepStatus {
  last_run_at?: string | null;
  last_status?: string | null;
  threads_deleted?: number | null;
  threads_pruned?: number | null;
  last_error?: string | null;
}

export interface OpsStats {
  at: string;
  dialect: string;
  threads: number;
  messages: number;
  active_threads: Record<string, number>;
  turns: Record<string, number | null>;
  tools: ToolStat[];
  tables: Record<string, { rows: number; bytes?: number | null }>;
  bytes?: number | null;
  notes?: string[];
  growth?: DayGrowth[];
  sweep?: SweepStatus | null;
  recent_failures?: FailedCall[];
}

export const DASH = "—";

/** A count with thousands separators, or "—". */
export function count(n: number | null | undefined): string {
  return n == null ? DASH : n.toLocaleString("en-US");
}

/** 0.125 -> "12.5%". */
export function percent(rate: number | null | undefined): string {
  return rate == null ? DASH : `${(rate * 100).toFixed(1)}%`;
}

/** Milliseconds as people read them: "850 ms", "2.4 s", "3.1 min". */
export function duration(ms: number | null | undefined): string {
  if (ms == null) return DASH;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** Bytes in B / KiB / MiB / GiB. */
export function size(bytes: number | null | undefined): string {
  if (bytes == null) return DASH;
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Where a failed call's thread opens at its checkpoint (App reads this address). */
/**
 * A failed call's status and error in the page's words. The audit's statuses are code words
 * ("error", "cancelled"), shown as they were in a Chinese page; a call stopped with its run has the
 * error "cancelled" too, said once.
 */
export function failureWords(
  call: Pick<FailedCall, "status" | "error">,
  t: (key: "failed" | "rejected" | "stoppedCall") => string,
): { status: string | null; error: string | null } {
  const named = { error: t("failed"), rejected: t("rejected"), cancelled: t("stoppedCall") } as Record<string, string>;
  const status = call.status ? (named[call.status] ?? call.status) : null;
  const error = call.error && call.error !== call.status ? call.error : null;
  return { status, error };
}

export function checkpointHash(threadId: string, checkpointId?: string | null): string {
  const thread = `#/thread/${encodeURIComponent(threadId)}`;
  return checkpointId ? `${thread}/checkpoint/${encodeURIComponent(checkpointId)}` : thread;
}

export interface Look {
  dark: boolean;
}

/** The page's theme tokens (styles.css) for charts, which cannot read CSS variables. */
export function palette({ dark }: Look) {
  return dark
    ? { text: "#e9e5df", muted: "#a39d95", line: "#37332e", accent: "#d9824f", danger: "#f07167", ok: "#7bc67e", soft: "#e8b04a", tip: "#2a2724" }
    : { text: "#24211d", muted: "#7a746c", line: "#e2ddd5", accent: "#a0522d", danger: "#b42318", ok: "#2e7d32", soft: "#d9822b", tip: "#ffffff" };
}

type Option = Record<string, unknown>;

function axisStyle(look: Look) {
  const c = palette(look);
  return { axisLabel: { color: c.muted, hideOverlap: true }, axisLine: { lineStyle: { color: c.line } }, splitLine: { lineStyle: { color: c.line } } };
}

function base(look: Look): Option {
  const c = palette(look);
  return {
    backgroundColor: "transparent",
    textStyle: { color: c.text },
    // One line that scrolls rather than lines drawn over the chart on a narrow screen.
    legend: { top: 0, type: "scroll", textStyle: { color: c.text } },
    tooltip: { trigger: "axis", backgroundColor: c.tip, borderColor: c.line, textStyle: { color: c.text } },
    animationDuration: 300,
  };
}

export interface ToolLabels {
  ok: string;
  errors: string;
  p50: string;
  p95: string;
  calls: string;
  errorRate: string;
}

/**
 * The tool ranking as two side-by-side horizontal bar grids sharing the tool axis: calls (finished
 * ones and failures stacked) on the left, p50 and p95 durations on the right. The busiest tool is
 * on top; the tooltip adds the error rate.
 */
export function toolRankingOption(tools: ToolStat[], labels: ToolLabels, look: Look): Option {
  const c = palette(look);
  const shown = [...tools].reverse(); // ECharts draws the first category at the bottom
  const names = shown.map((t) => t.tool);
  const hasTimes = tools.some((t) => t.p50_ms != null || t.p95_ms != null);
  const category = (grid: number, show: boolean) => ({
    type: "category", gridIndex: grid, data: names, axisLabel: { show, color: c.text, fontFamily: "ui-monospace, monospace" },
    axisLine: { lineStyle: { color: c.line } }, axisTick: { show: false },
  });
  const tooltip = {
    ...((base(look).tooltip as Option) ?? {}),
    axisPointer: { type: "shadow" },
    formatter: (params: unknown) => {
      const first = Array.isArray(params) ? (params[0] as { dataIndex?: number }) : undefined;
      const t = shown[first?.dataIndex ?? 0];
      if (!t) return "";
      return [
        `<b>${t.tool}</b>`,
        `${labels.calls}: ${count(t.calls)}`,
        `${labels.errors}: ${count(t.errors)} (${labels.errorRate} ${percent(t.error_rate)})`,
        `${labels.p50}: ${duration(t.p50_ms)}`,
        `${labels.p95}: ${duration(t.p95_ms)}`,
      ].join("<br/>");
    },
  };
  return {
    ...base(look),
    tooltip,
    color: [c.accent, c.danger, c.soft, c.accent],
    grid: [
      { left: 8, width: hasTimes ? "44%" : "92%", top: 30, bottom: 8, containLabel: true },
      { right: 16, width: "40%", top: 30, bottom: 8, containLabel: true, show: false },
    ],
    xAxis: [
      { type: "value", gridIndex: 0, minInterval: 1, ...axisStyle(look) },
      { type: "value", gridIndex: 1, show: hasTimes, ...axisStyle(look), axisLabel: { color: c.muted, hideOverlap: true, formatter: (v: number) => duration(v) } },
    ],
    yAxis: [category(0, true), category(1, false)],
    series: [
      { name: labels.ok, type: "bar", stack: "calls", xAxisIndex: 0, yAxisIndex: 0, data: shown.map((t) => t.calls - t.errors), itemStyle: { color: c.accent } },
      { name: labels.errors, type: "bar", stack: "calls", xAxisIndex: 0, yAxisIndex: 0, data: shown.map((t) => t.errors), itemStyle: { color: c.danger } },
      ...(hasTimes
        ? [
            { name: labels.p50, type: "bar", xAxisIndex: 1, yAxisIndex: 1, data: shown.map((t) => t.p50_ms ?? null), itemStyle: { color: c.soft } },
            { name: labels.p95, type: "bar", xAxisIndex: 1, yAxisIndex: 1, data: shown.map((t) => t.p95_ms ?? null), itemStyle: { color: c.muted } },
          ]
        : []),
    ],
  };
}

export interface GrowthLabels {
  checkpoints: string;
  turns: string;
  written: string;
}

/** Checkpoints and turns per day (lines, left axis) and bytes written (bars, right axis, KiB). */
export function growthOption(days: DayGrowth[], labels: GrowthLabels, look: Look): Option {
  const c = palette(look);
  return {
    ...base(look),
    color: [c.accent, c.ok, c.soft],
    grid: { left: 8, right: 8, top: 36, bottom: 8, containLabel: true },
    xAxis: { type: "category", data: days.map((d) => d.day.slice(5)), ...axisStyle(look), splitLine: { show: false } },
    yAxis: [
      { type: "value", minInterval: 1, ...axisStyle(look) },
      { type: "value", ...axisStyle(look), splitLine: { show: false }, axisLabel: { color: c.muted, hideOverlap: true, formatter: (v: number) => `${v} KiB` } },
    ],
    series: [
      { name: labels.written, type: "bar", yAxisIndex: 1, data: days.map((d) => Math.round((d.bytes / 1024) * 10) / 10), itemStyle: { color: c.soft, opacity: 0.45 } },
      { name: labels.checkpoints, type: "line", yAxisIndex: 0, data: days.map((d) => d.checkpoints), itemStyle: { color: c.accent } },
      { name: labels.turns, type: "line", yAxisIndex: 0, data: days.map((d) => d.turns), itemStyle: { color: c.ok } },
    ],
  };
}
