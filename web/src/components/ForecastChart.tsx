import { useEffect, useRef } from "react";
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
import { toEchartsOption, type Spec } from "../lib/chartOption";
import { useI18n } from "../i18n";

echarts.use([LineChart, GridComponent, LegendComponent, TitleComponent, TooltipComponent, DataZoomComponent, SVGRenderer]);

/** A price history with its forecast fan, drawn from the market tools' chart spec. */
export function ForecastChart({ spec, dark }: { spec: Spec; dark: boolean }) {
  const { t } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const chart = echarts.init(el, undefined, { renderer: "svg" });
    const draw = () => chart.setOption(toEchartsOption(spec, { dark, narrow: el.clientWidth < 520 }), true);
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
  }, [spec, dark]);
  const title = String((spec.title as { text?: string } | undefined)?.text ?? t("chart"));
  return <div ref={box} className="chart" data-testid="chart" role="img" aria-label={title} />;
}
