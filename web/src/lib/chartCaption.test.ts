import { describe, expect, it } from "vitest";
import { chartCaption, chartName, chartRefOf, hideChartPaths } from "./chartCaption";
import { drawnCharts, hideReportPaths } from "./tools";

// A make_chart result as agent/tools.py returns it, and the offline analyst's answers about it.
const png = "/tmp/tmps3d1/charts/iron_ore_wb_monthly-177bb0d7d1.png";
const json = "/tmp/tmps3d1/charts/iron_ore_wb_monthly-177bb0d7d1.echarts.json";
const content = JSON.stringify({
  series: "iron_ore_wb_monthly",
  title: "Iron ore, CFR China (World Bank) / 铁矿石价格（世界银行，CFR中国） — theta forecast",
  png,
  echarts: json,
  forecast_horizon: 6,
});
const answerEn = `Chart "Iron ore, CFR China, with a 6-period forecast" saved as PNG: ${png}\n(ECharts option for the web page: ${json})`;
const answerZh = `图表「铁矿石价格（含 6 期预测）」已保存为 PNG： ${png}\n（网页可用 ECharts 配置 ${json} 渲染）`;

describe("chart captions", () => {
  const ref = chartRefOf(content)!;

  it("reads the chart's files and title from a make_chart result only", () => {
    expect(ref.paths).toEqual([png, json]);
    expect(ref.forecastHorizon).toBe(6);
    expect(chartRefOf('{"latest": 108.64}')).toBeNull();
    expect(chartRefOf("Error: unknown series")).toBeNull();
  });

  it("names the series in the page's language", () => {
    expect(chartName(ref.title, "en")).toBe("Iron ore, CFR China (World Bank)");
    expect(chartName(ref.title, "zh")).toBe("铁矿石价格（世界银行，CFR中国）");
    expect(chartName("Rebar", "zh")).toBe("Rebar");
  });

  it("turns the file notice into one caption, in the page's language whatever the answer's", () => {
    for (const answer of [answerEn, answerZh]) {
      const en = hideChartPaths(answer, [ref], "en");
      expect(en).toBe(chartCaption(ref, "en"));
      expect(en).toContain("Chart above: Iron ore, CFR China (World Bank), with a 6-period forecast");
      const zh = hideChartPaths(answer, [ref], "zh");
      expect(zh).toBe("*见上图：铁矿石价格（世界银行，CFR中国）（含 6 期预测及 80% / 95% 区间）*");
      expect(zh).not.toContain("/tmp");
    }
  });

  it("keeps the rest of the answer and a long sentence that quotes a path", () => {
    const history = { ...ref, forecastHorizon: 0 };
    const analysis = "The price rose 4.2% last month, the third rise in a row, driven by restocking at Chinese mills before the holiday.";
    const text = `Latest: 108.64\n\n${answerEn}\n\n${analysis} The chart is in \`${png}\`.`;
    const out = hideChartPaths(text, [history], "en").split("\n");
    expect(out).toEqual([
      "Latest: 108.64",
      "",
      "*Chart above: Iron ore, CFR China (World Bank)*",
      "",
      `${analysis} The chart is in the chart above.`,
    ]);
    expect(hideChartPaths(text, [], "en")).toBe(text);
  });

  it("hides only the charts the page draws", () => {
    const drawn = { type: "tool" as const, tool_call_id: "a", content, artifact: { echarts_option: { series: [{ data: [1] }] } } };
    expect(drawnCharts([drawn])).toEqual([ref]);
    expect(drawnCharts([{ ...drawn, artifact: undefined }])).toEqual([]);
    expect(drawnCharts([{ ...drawn, status: "error" }])).toEqual([]);
  });
});

describe("report paths", () => {
  it("are cut to the file's name in the answer", () => {
    const path = "/tmp/tmp6l/reports/iron-ore-report-dd9b0dec.md";
    const result = { type: "tool" as const, tool_call_id: "r", name: "export_report", content: JSON.stringify({ report: path, sections: 2 }) };
    const text = `Report exported: ${path} (2 sections, 1 figures).`;
    expect(hideReportPaths(text, [result])).toBe("Report exported: iron-ore-report-dd9b0dec.md (2 sections, 1 figures).");
    expect(hideReportPaths(text, [{ ...result, status: "error" }])).toBe(text);
    expect(hideReportPaths(text, [{ ...result, name: "latest_price" }])).toBe(text);
  });
});
