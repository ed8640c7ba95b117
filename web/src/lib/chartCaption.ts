/**
 * The make_chart tool tells where it saved the chart on the server (a PNG for the terminal, an
 * ECharts option file), and answers about a chart repeat those paths. The page draws the chart
 * inline, so in the answer a line that only points at those files becomes a short caption in the
 * page's language, and a path quoted inside a longer sentence becomes "the chart above".
 */
import type { Lang } from "../i18n";

export interface ChartRef {
  /** "English name / 中文名 — method forecast", as market/chart.py titles it. */
  title: string;
  /** The server files the result names (PNG, ECharts option). */
  paths: string[];
  forecastHorizon: number;
}

/** The chart a make_chart result describes (its JSON content), or null for anything else. */
export function chartRefOf(content: string): ChartRef | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object") return null;
  const p = parsed as Record<string, unknown>;
  const paths = [p.png, p.echarts].filter((x): x is string => typeof x === "string" && x.length > 0);
  if (!paths.length) return null;
  const horizon = typeof p.forecast_horizon === "number" ? p.forecast_horizon : 0;
  return { title: typeof p.title === "string" ? p.title : "", paths, forecastHorizon: horizon };
}

/** The series' name in one language: the title's half before or after " / ", without its suffix. */
export function chartName(title: string, lang: Lang): string {
  const [en, zh] = title.split(" / ", 2);
  const name = lang === "zh" && zh ? zh : en;
  return name.split(" — ")[0].trim();
}

export function chartCaption(ref: ChartRef, lang: Lang): string {
  const name = chartName(ref.title, lang);
  const h = ref.forecastHorizon;
  if (lang === "zh") {
    return `*见上图：${name || "图表"}${h > 0 ? `（含 ${h} 期预测及 80% / 95% 区间）` : ""}*`;
  }
  return `*Chart above: ${name || "chart"}${h > 0 ? `, with a ${h}-period forecast and its 80% / 95% ranges` : ""}*`;
}

/** Text left on a line once its paths are gone, above which it is more than a file notice. */
const NOTICE_CHARS = 120;

/** `text` with the charts' server paths replaced (see the module comment). */
export function hideChartPaths(text: string, refs: ChartRef[], lang: Lang): string {
  if (!refs.length) return text;
  const captioned = new Set<ChartRef>();
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const ref = refs.find((r) => r.paths.some((p) => line.includes(p)));
    if (!ref) {
      out.push(line);
      continue;
    }
    let rest = line;
    for (const r of refs) for (const p of r.paths) rest = rest.split(p).join("\u0000");
    if (rest.replace(/\u0000|`/g, "").trim().length <= NOTICE_CHARS) {
      // "Chart … saved as PNG: …" and "(ECharts option …: …)": one caption per chart.
      if (!captioned.has(ref)) out.push(chartCaption(ref, lang));
      captioned.add(ref);
    } else {
      const above = lang === "zh" ? "上图" : "the chart above";
      out.push(rest.replace(/`?\u0000`?/g, above));
    }
  }
  return out.join("\n");
}
