import { describe, expect, it } from "vitest";
import { chartHeading, chartSpecOf, seriesLabel, toEchartsOption, tooltipRows } from "./chartOption";

// The shape market/chart.py's echarts_option returns: history, forecast, one 80 % band.
const spec = {
  title: { text: "Iron ore", subtext: "Source: WB" },
  xAxis: { type: "category", data: ["2026-01", "2026-02", "2026-03", "2026-04"] },
  yAxis: { type: "value", name: "US$/dmt" },
  legend: { data: ["history", "forecast (theta)", "80% band"] },
  series: [
    { name: "history", type: "line", data: [100, 104, null, null] },
    { name: "forecast (theta)", type: "line", data: [null, 104, 105, 106] },
    { name: "80% lower", type: "line", stack: "band80", data: [null, 104, 98, 95] },
    { name: "80% band", type: "line", stack: "band80", areaStyle: { color: "#4c78a8" }, data: [null, 0, 14, 22] },
  ],
};

describe("chart spec", () => {
  it("is found in a make_chart artifact and nowhere else", () => {
    expect(chartSpecOf({ echarts_option: spec })).toBe(spec);
    expect(chartSpecOf({ echarts_option: { series: [] } })).toBeNull();
    expect(chartSpecOf(null)).toBeNull();
    expect(chartSpecOf("text")).toBeNull();
  });

  it("shows a band as its lower–upper range, not the stacked height", () => {
    const rows = tooltipRows(spec.series, 2);
    expect(rows).toEqual(["forecast (theta): 105.0", "80%: 98.00 – 112.0"]);
    // at the anchor the band has no width, so no range row
    expect(tooltipRows(spec.series, 1)).toEqual(["history: 104.0", "forecast (theta): 104.0"]);
  });

  it("keeps the data, colours a band's legend by its area, and opens on the last points", () => {
    const option = toEchartsOption(spec, { dark: true, narrow: false });
    const series = option.series as { name: string; data: unknown[]; itemStyle?: { color: string } }[];
    expect(series.map((s) => s.data)).toEqual(spec.series.map((s) => s.data));
    expect(series[3].itemStyle?.color).toBe("#4c78a8");
    const zoom = option.dataZoom as { startValue: number }[];
    expect(zoom[0].startValue).toBe(0);
    const long = { ...spec, xAxis: { data: Array.from({ length: 300 }, (_, i) => String(i)) } };
    expect((toEchartsOption(long, { dark: false, narrow: true }).dataZoom as { startValue: number }[])[1].startValue).toBe(228);
  });
});

describe("chart words in the page's language", () => {
  const titled = {
    ...spec,
    title: { text: "Iron ore, CFR China (World Bank) / 铁矿石价格（世界银行，CFR中国） — nowcast forecast", subtext: "Source: World Bank Pink Sheet" },
  };

  it("names the series in Chinese in a Chinese page, as the PNG does", () => {
    expect(["history", "forecast (theta)", "80% band"].map((n) => seriesLabel(n, "zh"))).toEqual(["历史", "预测（theta）", "80% 区间"]);
    expect(seriesLabel("forecast (theta)", "en")).toBe("forecast (theta)");
    expect(tooltipRows(spec.series, 2, "zh")).toEqual(["预测（theta）: 105.0", "80%: 98.00 – 112.0"]);
  });

  it("names a comparison chart's lines in the page's language", () => {
    const name = "SHFE rebar futures, continuous (settle) / 上期所螺纹钢期货（连续，结算价）";
    expect(seriesLabel(name, "zh")).toBe("上期所螺纹钢期货（连续，结算价）");
    expect(seriesLabel(name, "en")).toBe("SHFE rebar futures, continuous (settle)");
    const lines = [{ name, data: [100, 101.5] }];
    expect(tooltipRows(lines, 1, "zh")).toEqual(["上期所螺纹钢期货（连续，结算价）: 101.5"]);
  });

  it("heads the chart with the title in one language and its source", () => {
    expect(chartHeading(titled, "zh")).toEqual({ title: "铁矿石价格（世界银行，CFR中国） — nowcast 预测", source: "来源：World Bank Pink Sheet" });
    expect(chartHeading(titled, "en")).toEqual({ title: "Iron ore, CFR China (World Bank) — nowcast forecast", source: "Source: World Bank Pink Sheet" });
    expect(chartHeading({ ...spec, title: { text: "Rebar / 螺纹钢" } }, "zh")).toEqual({ title: "螺纹钢", source: "" });
    // The source line in Chinese when the chart carries it (a Chinese page showed "来源：World Bank …").
    const sourced = { ...spec, title: { ...titled.title, subtext_zh: "来源：世界银行大宗商品价格数据（Pink Sheet，月度）" } };
    expect(chartHeading(sourced, "zh").source).toBe("来源：世界银行大宗商品价格数据（Pink Sheet，月度）");
    expect(chartHeading(sourced, "en").source).toBe("Source: World Bank Pink Sheet");
  });

  it("wraps the legend on a narrow chart rather than paging it, and lowers the grid under it", () => {
    const wide = toEchartsOption(titled, { dark: false, narrow: false, lang: "zh" });
    const narrow = toEchartsOption(titled, { dark: false, narrow: true, lang: "zh" });
    expect((wide.legend as { type: string }).type).toBe("scroll");
    expect((narrow.legend as { type: string }).type).toBe("plain");
    expect((narrow.grid as { top: number }).top).toBeGreaterThan((wide.grid as { top: number }).top);
  });

  it("leaves the heading to the page and labels the legend", () => {
    const option = toEchartsOption(titled, { dark: false, narrow: false, lang: "zh" });
    expect((option.title as { show: boolean }).show).toBe(false);
    expect((option.legend as { formatter: (n: string) => string }).formatter("95% band")).toBe("95% 区间");
  });
});
