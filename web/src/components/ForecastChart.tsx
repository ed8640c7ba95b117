import { useEffect, useMemo, useRef } from "react";
import * as echarts from "echarts/core";
import { LineChart } from "echarts/charts";
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  TitleComponent,
  TooltipComponent,
} from "echarts/components";
import { SVGRenderer } from "echarts/renderers";
import { chartHeading, toEchartsOption, type Spec } from "../lib/chartOption";
import { useI18n } from "../i18n";

echarts.use([LineChart, GridComponent, LegendComponent, TitleComponent, TooltipComponent, DataZoomComponent, SVGRenderer]);

/** A price history with its forecast fan, drawn from the market tools' chart spec. */
export function ForecastChart({ spec, dark }: { spec: Spec; dark: boolean }) {
  const { t, lang } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  // Drawn again when the chart changes, not when the same chart comes in a new object: every `values`
  // event of a run and every history read bring the whole conversation anew, and in a conversation of
  // 60 questions its 20 charts were drawn again several times per answer (about 2 s of the page's time).
  const same = useMemo(() => JSON.stringify(spec), [spec]);
  const shown = useRef(spec);
  shown.current = spec;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const spec = shown.current;
    const chart = echarts.init(el, undefined, { renderer: "svg" });
    const draw = () => chart.setOption(toEchartsOption(spec, { dark, narrow: el.clientWidth < 520, lang }), true);
    draw();
    const observer = new ResizeObserver(() => {
      chart.resize();
      draw();
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.dispose();
    };
  }, [same, dark, lang]);
  const heading = chartHeading(spec, lang);
  const title = heading.title || t("chart");
  return (
    <figure className="chart-figure">
      <figcaption>
        <span className="chart-title" data-testid="chart-title">{title}</span>
        {heading.source && <span className="chart-source" data-testid="chart-source">{heading.source}</span>}
      </figcaption>
      <div ref={box} className="chart" data-testid="chart" role="img" aria-label={title} />
    </figure>
  );
}
