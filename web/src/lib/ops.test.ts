import { describe, expect, it } from "vitest";
import { DICTS } from "../i18n";
import { checkpointHash, count, duration, failureWords, growthOption, percent, size, toolRankingOption, type ToolStat } from "./ops";

const labels = { ok: "ok", errors: "errors", p50: "p50", p95: "p95", calls: "calls", errorRate: "error rate" };
type Series = { name: string; data: (number | null)[] };

describe("formatting", () => {
  it("shows a dash for what the server did not send", () => {
    expect([count(null), percent(undefined), duration(null), size(undefined)]).toEqual(["—", "—", "—", "—"]);
  });
  it("reads like a person would write it", () => {
    expect(count(12345)).toBe("12,345");
    expect(percent(0.125)).toBe("12.5%");
    expect([duration(850.4), duration(2400), duration(186_000)]).toEqual(["850 ms", "2.4 s", "3.1 min"]);
    expect([size(900), size(2048), size(5 * 1024 * 1024)]).toEqual(["900 B", "2.0 KiB", "5.0 MiB"]);
  });
  it("links a failure to its thread at the checkpoint", () => {
    expect(checkpointHash("t-1", "cp 1")).toBe("#/thread/t-1/checkpoint/cp%201");
    expect(checkpointHash("t-1", null)).toBe("#/thread/t-1");
  });
});

describe("tool ranking", () => {
  const tools: ToolStat[] = [
    { tool: "forecast", calls: 10, errors: 2, error_rate: 0.2, p50_ms: 120, p95_ms: 900 },
    { tool: "chart", calls: 4, errors: 0, error_rate: 0, p50_ms: null, p95_ms: 40 },
  ];
  it("stacks finished calls and failures, busiest on top, with p50/p95 beside", () => {
    const option = toolRankingOption(tools, labels, { dark: false });
    const series = option.series as Series[];
    expect((option.yAxis as { data: string[] }[])[0].data).toEqual(["chart", "forecast"]);
    expect(series.map((s) => s.name)).toEqual(["ok", "errors", "p50", "p95"]);
    expect(series[0].data).toEqual([4, 8]);
    expect(series[1].data).toEqual([0, 2]);
    expect(series[2].data).toEqual([null, 120]);
    const tip = (option.tooltip as { formatter: (p: unknown) => string }).formatter([{ dataIndex: 1 }]);
    expect(tip).toContain("20.0%");
    expect(tip).toContain("900 ms");
  });
  it("draws no duration bars when no call is timed", () => {
    const untimed = tools.map(({ p50_ms: _a, p95_ms: _b, ...rest }) => rest);
    const series = toolRankingOption(untimed, labels, { dark: true }).series as Series[];
    expect(series.map((s) => s.name)).toEqual(["ok", "errors"]);
  });
});

describe("growth", () => {
  it("draws checkpoints and turns per day and the KiB written", () => {
    const days = [
      { day: "2026-11-30", checkpoints: 0, turns: 0, bytes: 0 },
      { day: "2026-12-01", checkpoints: 12, turns: 3, bytes: 3584 },
    ];
    const option = growthOption(days, { checkpoints: "checkpoints", turns: "turns", written: "written" }, { dark: false });
    expect((option.xAxis as { data: string[] }).data).toEqual(["11-30", "12-01"]);
    const series = option.series as Series[];
    expect(series.find((s) => s.name === "written")?.data).toEqual([0, 3.5]);
    expect(series.find((s) => s.name === "turns")?.data).toEqual([0, 3]);
  });
});

describe("a failed call's words", () => {
  const zh = (k: "failed" | "rejected" | "stoppedCall") => DICTS.zh[k];

  it("names the audit's status in the page's language and says a bare 'cancelled' once", () => {
    // Was the badge "cancelled" and the error "cancelled" in a Chinese page.
    expect(failureWords({ status: "cancelled", error: "cancelled" }, zh)).toEqual({ status: "已中止", error: null });
    expect(failureWords({ status: "error", error: "ValueError: start too early" }, zh)).toEqual({ status: "失败", error: "ValueError: start too early" });
    expect(failureWords({ status: "rejected", error: "not now" }, zh).status).toBe("已拒绝");
    expect(failureWords({ status: "timeout", error: null }, zh)).toEqual({ status: "timeout", error: null });
  });
});
