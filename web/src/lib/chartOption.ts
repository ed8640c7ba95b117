/**
 * The market tools' chart spec (an ECharts option: history line, dashed forecast line, and per
 * band level a transparent "N% lower" line stacked under an "N% band" area of heights) turned
 * into the option the page draws: theme colours, a zoom slider and a tooltip that shows each
 * band as its lower–upper range rather than the stacked heights.
 */

export type Spec = Record<string, unknown>;
type Series = { name?: string; data?: (number | null)[]; stack?: string; [k: string]: unknown };

export interface ChartLook {
  dark: boolean;
  narrow: boolean;
  /** The page's language: the spec's words are English (series) or both languages (title). */
  lang?: "zh" | "en";
}

/**
 * A series' name as shown in the legend and tooltip. The spec names its series in English
 * ("history", "forecast (theta)", "80% band"), which are also how the bands are found; in a
 * Chinese page they read as market/chart.py's PNG labels do. A comparison chart's lines are
 * named "English / 中文": the page's half is shown.
 */
export function seriesLabel(name: string, lang: "zh" | "en" = "en"): string {
  const [en, zh] = name.split(" / ", 2);
  if (zh !== undefined) return (lang === "zh" ? zh : en).trim();
  if (lang === "en") return name;
  if (name === "history") return "历史";
  const forecast = /^forecast \((.+)\)$/.exec(name);
  if (forecast) return `预测（${forecast[1]}）`;
  const band = /^(\d+)% band$/.exec(name);
  return band ? `${band[1]}% 区间` : name;
}

/**
 * The chart's heading and source line in one language. The spec's title is "English / 中文" plus
 * " — method forecast", its subtext "Source: …"; drawn by the page as text above the chart (it
 * wraps there, where inside the chart a long title ran over the legend).
 */
export function chartHeading(spec: Spec, lang: "zh" | "en"): { title: string; source: string } {
  const title = (spec.title as { text?: unknown; subtext?: unknown; subtext_zh?: unknown } | undefined) ?? {};
  // The source in Chinese (market/chart.py's `subtext_zh`); charts drawn before it had only English.
  if (lang === "zh" && typeof title.subtext_zh === "string" && title.subtext_zh) {
    return { title: headingOf(title.text, lang), source: title.subtext_zh };
  }
  const source = String(title.subtext ?? "").replace(/^Source: /, "");
  return { title: headingOf(title.text, lang), source: source ? (lang === "zh" ? `来源：${source}` : `Source: ${source}`) : "" };
}

function headingOf(text: unknown, lang: "zh" | "en"): string {
  const [names, suffix] = String(text ?? "").split(" — ", 2);
  const [en, zh] = names.split(" / ", 2);
  const method = suffix?.replace(/ forecast$/, "");
  const name = (lang === "zh" && zh ? zh : en).trim();
  return method ? (lang === "zh" ? `${name} — ${method} 预测` : `${name} — ${method} forecast`) : name;
}

/** The grid's top below a legend wrapped onto two lines and the y axis's unit. */
const LEGEND_TWO_LINES = 76;

/** Points shown at first (six years of months); the slider reaches the rest. */
const WINDOW = 72;

const fmt = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(2));

/** The chart spec carried by a tool message's artifact (`{echarts_option}`), if any. */
export function chartSpecOf(artifact: unknown): Spec | null {
  if (!artifact || typeof artifact !== "object") return null;
  const option = (artifact as { echarts_option?: unknown }).echarts_option;
  if (!option || typeof option !== "object") return null;
  const series = (option as { series?: unknown }).series;
  return Array.isArray(series) && series.length > 0 ? (option as Spec) : null;
}

/** Tooltip lines for one x index: history/forecast values and each band's range. */
export function tooltipRows(series: Series[], index: number, lang: "zh" | "en" = "en"): string[] {
  const rows: string[] = [];
  for (const s of series) {
    const name = s.name ?? "";
    const v = s.data?.[index];
    if (v == null || name.endsWith(" lower")) continue;
    if (name.endsWith(" band")) {
      const lower = series.find((o) => o.stack === s.stack && o !== s)?.data?.[index];
      if (lower == null || v === 0) continue;
      rows.push(`${name.replace(" band", "")}: ${fmt(lower)} – ${fmt(lower + v)}`);
    } else {
      rows.push(`${seriesLabel(name, lang)}: ${fmt(v)}`);
    }
  }
  return rows;
}

export function toEchartsOption(spec: Spec, look: ChartLook): Spec {
  const text = look.dark ? "#d6d3ce" : "#33302b";
  const faint = look.dark ? "#3a3733" : "#e6e2dc";
  // A band's legend swatch takes its area's colour, not the palette's.
  const series = ((spec.series as Series[] | undefined) ?? []).map((s) => {
    const area = (s.areaStyle as { color?: string } | undefined)?.color;
    return area ? { ...s, itemStyle: { color: area } } : { ...s };
  });
  const xAxis = (spec.xAxis as Spec | undefined) ?? {};
  const dates = (xAxis.data as string[] | undefined) ?? [];
  const legend = (spec.legend as Spec | undefined) ?? {};
  const lang = look.lang ?? "en";
  const palette = look.dark ? ["#e8a878", "#f2c14e"] : ["#a0522d", "#d9822b"];
  const start = Math.max(0, dates.length - WINDOW);
  return {
    ...spec,
    backgroundColor: "transparent",
    color: palette,
    textStyle: { color: text },
    // The heading and source are the page's text above the chart (chartHeading).
    title: { show: false },
    // A phone's chart is too narrow for the legend on one line: a scrolling legend hid the bands
    // behind its "1/2" pager there, so it wraps instead, onto a second line the grid makes room for.
    legend: {
      ...legend,
      top: 0,
      textStyle: { color: text },
      type: look.narrow ? "plain" : "scroll",
      formatter: (name: string) => seriesLabel(name, lang),
    },
    // (right: room for half of the last date's label, which is centred on the last point)
    grid: { left: 48, right: 36, top: look.narrow ? LEGEND_TWO_LINES : 48, bottom: 64, containLabel: true },
    tooltip: {
      trigger: "axis",
      backgroundColor: look.dark ? "#2a2724" : "#ffffff",
      borderColor: faint,
      textStyle: { color: text },
      formatter: (params: unknown) => {
        const first = Array.isArray(params) ? (params[0] as { dataIndex?: number }) : undefined;
        const i = first?.dataIndex ?? 0;
        return [dates[i] ?? "", ...tooltipRows(series, i, lang)].join("<br/>");
      },
    },
    // The first date starts at the axis rather than centred on it: centred, it ran into the y axis's
    // lowest label on a phone.
    xAxis: { ...xAxis, axisLabel: { color: text, alignMinLabel: "left" }, axisLine: { lineStyle: { color: faint } } },
    yAxis: {
      ...((spec.yAxis as Spec | undefined) ?? {}),
      axisLabel: { color: text },
      nameTextStyle: { color: text },
      splitLine: { lineStyle: { color: faint } },
    },
    dataZoom: [
      { type: "inside", startValue: start },
      { type: "slider", startValue: start, height: 18, bottom: 12 },
    ],
    series,
  };
}
