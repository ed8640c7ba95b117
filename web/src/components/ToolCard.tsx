import { lazy, Suspense, useState } from "react";
import { useI18n } from "../i18n";
import { formatDuration, prettyResult, type ToolRun } from "../lib/tools";

// ECharts is most of the bundle: load it with the first chart, not with the page.
const ForecastChart = lazy(() => import("./ForecastChart").then((m) => ({ default: m.ForecastChart })));
import { ReportLink } from "./ReportLink";

interface Props {
  run: ToolRun;
  durationMs: number | null;
  pending: boolean;
  /** The run was stopped before this call's result: it will not come (the next run patches the call). */
  stopped: boolean;
  dark: boolean;
  threadId: string | null;
}

/** One tool call: a collapsed summary line, opening to arguments and result; its chart below. */
export function ToolCard({ run, durationMs, pending, stopped, dark, threadId }: Props) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const state = run.result
    ? run.rejected ? "rejected" : run.cancelled ? "cancelled" : run.failed ? "error" : "done"
    : pending ? "running" : stopped ? "cancelled" : "waiting";
  const label = { running: t("running"), error: t("failed"), rejected: t("rejected"), cancelled: t("cancelled"), done: "", waiting: "" }[state];
  return (
    <div className="tool" data-testid="tool-card" data-tool={run.call.name} data-state={state}>
      <button
        type="button"
        className="tool-head"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        data-testid="tool-card-toggle"
      >
        <span className={`dot dot-${state}`} aria-hidden="true" />
        <span className="tool-name">{run.call.name}</span>
        {label && <span className="tool-state">{label}</span>}
        {durationMs != null && run.result && !run.cancelled && (
          <span className="tool-time" title={t("duration")} data-testid="tool-duration">
            {formatDuration(durationMs)}
          </span>
        )}
        <span className="chev" aria-hidden="true">{open ? "▾" : "▸"}</span>
      </button>
      {open && (
        <div className="tool-body">
          <div className="tool-label">{t("arguments")}</div>
          <pre data-testid="tool-args">{JSON.stringify(run.call.args, null, 2)}</pre>
          {run.result && (
            <>
              <div className="tool-label">{t("result")}</div>
              <pre data-testid="tool-result">{prettyResult(run.result.content)}</pre>
            </>
          )}
        </div>
      )}
      {run.chart && (
        <Suspense fallback={<div className="chart" aria-busy="true" />}>
          <ForecastChart spec={run.chart} dark={dark} />
        </Suspense>
      )}
      {run.report && threadId && <ReportLink threadId={threadId} path={run.report} />}
    </div>
  );
}
