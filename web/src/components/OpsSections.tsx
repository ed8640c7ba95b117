import { localeOf, useI18n, type Lang } from "../i18n";
import { checkpointHash, count, DASH, duration, failureWords, percent, size, type FailedCall, type OpsStats, type SweepStatus, type ToolStat } from "../lib/ops";

const when = (iso: string | null | undefined, lang: Lang): string =>
  iso ? new Date(iso).toLocaleString(localeOf(lang)) : DASH;

/** The tool ranking's exact figures under its chart. */
export function ToolTable({ tools }: { tools: ToolStat[] }) {
  const { t } = useI18n();
  return (
    <table className="ops-table" data-testid="ops-tools-table">
      <thead>
        <tr>
          <th scope="col">{t("tool")}</th>
          <th scope="col" className="num">{t("calls")}</th>
          <th scope="col" className="num">{t("errors")}</th>
          <th scope="col" className="num">{t("errorRate")}</th>
          <th scope="col" className="num">{t("p50")}</th>
          <th scope="col" className="num">{t("p95")}</th>
        </tr>
      </thead>
      <tbody>
        {tools.map((tool) => (
          <tr key={tool.tool} data-testid="ops-tool-row" data-tool={tool.tool}>
            <th scope="row" className="mono">{tool.tool}</th>
            <td className="num" data-testid="ops-tool-calls">{count(tool.calls)}</td>
            <td className={`num${tool.errors ? " error-text" : ""}`}>{count(tool.errors)}</td>
            <td className="num" data-testid="ops-tool-error-rate">{percent(tool.error_rate)}</td>
            <td className="num" data-testid="ops-tool-p50">{duration(tool.p50_ms)}</td>
            <td className="num" data-testid="ops-tool-p95">{duration(tool.p95_ms)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Failed tool calls, newest first, each opening its thread's history at the call's checkpoint. */
export function FailureList({ failures, onOpen }: { failures: FailedCall[] | undefined; onOpen: (threadId: string, checkpointId: string | null) => void }) {
  const { t, lang } = useI18n();
  if (failures === undefined) return <p className="muted" data-testid="ops-failures-none">{DASH}</p>;
  if (failures.length === 0) return <p className="muted" data-testid="ops-failures-none">{t("noFailures")}</p>;
  return (
    <ul className="ops-failures" data-testid="ops-failures">
      {failures.map((f, i) => {
        const words = failureWords(f, t);
        return (
        <li key={`${f.thread_id}-${f.checkpoint_id ?? ""}-${i}`} data-testid="ops-failure" data-thread-id={f.thread_id}>
          <span className="dot dot-error" aria-hidden="true" />
          <span className="mono">{f.tool}</span>
          <span className="muted small">{when(f.started_at, lang)}</span>
          {words.status && <span className="badge error" title={f.status ?? ""}>{words.status}</span>}
          <span className="ops-failure-error" title={words.error ?? ""}>{words.error || (words.status ? "" : DASH)}</span>
          <a
            className="btn small"
            href={checkpointHash(f.thread_id, f.checkpoint_id)}
            onClick={(e) => {
              e.preventDefault();
              onOpen(f.thread_id, f.checkpoint_id ?? null);
            }}
            data-testid="ops-failure-open"
          >
            {t("openAtCheckpoint")}
          </a>
        </li>
        );
      })}
    </ul>
  );
}

/** Rows and bytes per table, each with a bar against the largest table. */
export function SizeTable({ tables, total }: { tables: OpsStats["tables"]; total: number | null | undefined }) {
  const { t } = useI18n();
  const largest = Math.max(1, ...Object.values(tables).map((info) => info.bytes ?? 0));
  return (
    <table className="ops-table" data-testid="ops-sizes-table">
      <thead>
        <tr>
          <th scope="col">{t("table")}</th>
          <th scope="col" className="num">{t("rows")}</th>
          <th scope="col" className="num">{t("size")}</th>
          <th scope="col" className="ops-bar-col"><span className="sr-only">{t("size")}</span></th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(tables).map(([name, info]) => (
          <tr key={name} data-testid="ops-table-row" data-table={name}>
            <th scope="row" className="mono">{name}</th>
            <td className="num" data-testid="ops-table-rows">{count(info.rows)}</td>
            <td className="num">{size(info.bytes)}</td>
            <td className="ops-bar-col" aria-hidden="true">
              <span className="ops-bar" style={{ width: `${((info.bytes ?? 0) / largest) * 100}%` }} />
            </td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">{t("totalOnDisk")}</th>
          <td />
          <td className="num" data-testid="ops-total-bytes">{size(total)}</td>
          <td />
        </tr>
      </tfoot>
    </table>
  );
}

/** One line about the expiry sweep: when it last ran, how it went, what it removed. */
export function SweepLine({ sweep }: { sweep: SweepStatus | null | undefined }) {
  const { t, lang } = useI18n();
  return (
    <p className="ops-sweep" data-testid="ops-sweep">
      <b>{t("sweep")}</b>{" "}
      {sweep ? (
        <>
          <span className={`dot ${sweep.last_error ? "dot-error" : "dot-done"}`} aria-hidden="true" /> {t("sweepLast")} {when(sweep.last_run_at, lang)} ·{" "}
          {sweep.last_status ?? DASH} · {t("sweepDeleted")} {count(sweep.threads_deleted)} · {t("sweepPruned")} {count(sweep.threads_pruned)}
          {sweep.last_error && <span className="error-text"> · {sweep.last_error}</span>}
        </>
      ) : (
        <span className="muted">{t("sweepNone")}</span>
      )}
    </p>
  );
}
