import { lazy, Suspense, useEffect, useMemo, useState } from "react";
import { describeError, fetchOpsStats } from "../api";
import { localeOf, useI18n } from "../i18n";
import { count, growthOption, toolRankingOption, type OpsStats } from "../lib/ops";
import { FailureList, SizeTable, SweepLine, ToolTable } from "./OpsSections";

const OpsChart = lazy(() => import("./OpsCharts").then((m) => ({ default: m.OpsChart })));

interface Props {
  apiKey: string | null;
  dark: boolean;
  onOpenCheckpoint: (threadId: string, checkpointId: string | null) => void;
  onBack: () => void;
}

/** The operations view (admins): activity, the tool ranking, failures, table sizes, growth, sweep. */
export function OpsPage({ apiKey, dark, onOpenCheckpoint, onBack }: Props) {
  const { t, lang } = useI18n();
  const [stats, setStats] = useState<OpsStats | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    fetchOpsStats(apiKey)
      .then((s) => live && (setStats(s), setError(null)))
      .catch((err) => live && setError(err));
    return () => {
      live = false;
    };
  }, [apiKey, tick]);

  const toolOption = useMemo(
    () =>
      stats &&
      toolRankingOption(stats.tools, { ok: t("okCalls"), errors: t("errors"), p50: t("p50"), p95: t("p95"), calls: t("calls"), errorRate: t("errorRate") }, { dark }),
    [stats, t, dark],
  );
  const growthChart = useMemo(
    () => stats?.growth && growthOption(stats.growth, { checkpoints: t("checkpoints"), turns: t("turns"), written: t("written") }, { dark }),
    [stats, t, dark],
  );
  const growthTotals = (stats?.growth ?? []).reduce((sum, d) => ({ checkpoints: sum.checkpoints + d.checkpoints, turns: sum.turns + d.turns }), { checkpoints: 0, turns: 0 });

  return (
    <main className="ops" data-testid="ops-page" aria-busy={!stats && error == null}>
      <div className="chat-bar">
        <h1 className="chat-title">{t("opsTitle")}</h1>
        <div className="row">
          {stats && (
            <span className="muted small" data-testid="ops-at">
              {t("opsUpdated")} {new Date(stats.at).toLocaleString(localeOf(lang))} · {stats.dialect}
            </span>
          )}
          <button type="button" className="btn small" onClick={() => setTick((n) => n + 1)} data-testid="ops-refresh">{t("refresh")}</button>
          <button type="button" className="btn small" onClick={onBack} data-testid="ops-back">{t("backToChat")}</button>
        </div>
      </div>
      <div className="ops-body">
        {error != null && <p className="error-box" role="alert" data-testid="ops-error">{describeError(error, t)}</p>}
        {!stats && error == null && <p className="muted" role="status">{t("loading")}</p>}
        {stats && (
          <>
            <section className="ops-figures" aria-label={t("activeThreads")}>
              <Figure label={`${t("activeThreads")} · ${t("last24h")}`} value={count(stats.active_threads["24h"])} testId="ops-active-24h" />
              <Figure label={`${t("activeThreads")} · ${t("last7d")}`} value={count(stats.active_threads["7d"])} testId="ops-active-7d" />
              <Figure label={`${t("turns")} · ${t("last24h")}`} value={count(stats.turns["24h"])} testId="ops-turns-24h" />
              <Figure label={`${t("turns")} · ${t("last7d")}`} value={count(stats.turns["7d"])} testId="ops-turns-7d" />
              <Figure label={`${t("conversations")} · ${t("allTime")}`} value={count(stats.threads)} testId="ops-threads" />
              <Figure label={`${t("turns")} · ${t("allTime")}`} value={count(stats.turns.total)} testId="ops-turns-total" />
            </section>

            <section className="ops-card" aria-labelledby="ops-tools">
              <h2 id="ops-tools">{t("toolRanking")}</h2>
              {stats.tools.length === 0 ? (
                <p className="muted">{t("noToolCalls")}</p>
              ) : (
                <>
                  {toolOption && (
                    <Suspense fallback={<div className="ops-chart" aria-busy="true" />}>
                      <OpsChart option={toolOption} label={t("toolRanking")} height={Math.max(160, 44 + stats.tools.length * 34)} testId="ops-tools-chart" />
                    </Suspense>
                  )}
                  <ToolTable tools={stats.tools} />
                </>
              )}
            </section>

            <section className="ops-card" aria-labelledby="ops-failures">
              <h2 id="ops-failures">{t("recentFailures")}</h2>
              <FailureList failures={stats.recent_failures} onOpen={onOpenCheckpoint} />
            </section>

            <section className="ops-card" aria-labelledby="ops-growth">
              <h2 id="ops-growth">{t("growth")}</h2>
              {growthChart ? (
                <>
                  <Suspense fallback={<div className="ops-chart" aria-busy="true" />}>
                    <OpsChart option={growthChart} label={t("growth")} height={240} testId="ops-growth-chart" />
                  </Suspense>
                  <p className="muted small" data-testid="ops-growth-total">
                    {t("checkpoints")} {count(growthTotals.checkpoints)} · {t("turns")} {count(growthTotals.turns)}
                  </p>
                </>
              ) : (
                <p className="muted">—</p>
              )}
            </section>

            <section className="ops-card" aria-labelledby="ops-sizes">
              <h2 id="ops-sizes">{t("tableSizes")}</h2>
              <SizeTable tables={stats.tables} total={stats.bytes} />
            </section>

            <SweepLine sweep={stats.sweep} />
            {(stats.notes ?? []).map((note) => <p key={note} className="muted small">{note}</p>)}
          </>
        )}
      </div>
    </main>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="ops-figure">
      <div className="ops-figure-value" data-testid={testId}>{value}</div>
      <div className="muted small">{label}</div>
    </div>
  );
}
