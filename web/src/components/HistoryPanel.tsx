import { memo, useEffect, useMemo, useRef, useState } from "react";
import type { ThreadState } from "@langchain/langgraph-sdk";
import { describeError, textOf } from "../api";
import { localeOf, useI18n } from "../i18n";
import { formatDate } from "../lib/dateFormat";
import { indexById, messageLine, writerLabel, writerOf, type MessageLikeForHistory } from "../lib/history";
import { Icon } from "./Icon";

interface Props {
  /** The newest checkpoints of the history the conversation reads (null until it is in), and why a read failed. */
  states: ThreadState[] | null;
  error: unknown;
  /** A checkpoint to select and scroll to once the history has loaded. */
  focus?: string | null;
  onClose: () => void;
  onBranch: (state: ThreadState) => void;
}

/** "14:03:07" today, "11-28 14:03" on other days. */
function shortTime(d: Date, locale: string, today: string): string {
  return formatDate(d, locale, d.toDateString() === today ? "time" : "dayTime");
}

const messagesAt = (state: ThreadState | undefined): MessageLikeForHistory[] =>
  (state?.values as { messages?: MessageLikeForHistory[] } | undefined)?.messages ?? [];

/**
 * The thread's checkpoints (all branches, newest first) and the state at the selected one. They are
 * the conversation's own history (Chat.tsx): the panel read its 200 again when each run ended, 22 MB
 * in a conversation of 60 questions, for the few checkpoints the run wrote.
 */
export const HistoryPanel = memo(function HistoryPanel({ states, error, focus = null, onClose, onBranch }: Props) {
  const { t, lang } = useI18n();
  const [selected, setSelected] = useState<string | null>(focus);
  const list = useRef<HTMLOListElement>(null);

  const loaded = states !== null;
  useEffect(() => {
    if (!loaded || !focus) return;
    list.current?.querySelector(`[data-checkpoint-id="${CSS.escape(focus)}"]`)?.scrollIntoView({ block: "center" });
  }, [loaded, focus]);

  const byId = useMemo(() => indexById(states ?? []), [states]);
  const chosen = selected ? byId.get(selected) : undefined;
  const messages = messagesAt(chosen);
  const today = new Date().toDateString();

  return (
    <aside className="history" data-testid="history-panel" aria-label={t("historyTitle")}>
      <div className="panel-head">
        <h2>{t("historyTitle")}</h2>
        <button type="button" className="icon" aria-label={t("close")} onClick={onClose} data-testid="history-close"><Icon name="close" /></button>
      </div>
      {error != null && <p className="error-text" role="alert">{describeError(error, t)}</p>}
      {states && states.length === 0 && <p className="muted">{t("noHistory")}</p>}
      <ol className="checkpoints" ref={list}>
        {(states ?? []).map((s) => {
          const id = s.checkpoint.checkpoint_id ?? "";
          const open = id === selected;
          const writer = writerOf(s, byId);
          const { label, internal } = writerLabel(writer, messagesAt(s), t, textOf);
          return (
            <li key={id}>
              <button
                type="button"
                className={`checkpoint${open ? " active" : ""}`}
                aria-pressed={open}
                onClick={() => setSelected(open ? null : id)}
                data-testid="history-item"
                data-checkpoint-id={id}
              >
                <span className="cp-time" title={s.created_at ?? ""}>{s.created_at ? shortTime(new Date(s.created_at), localeOf(lang), today) : ""}</span>
                <span className="cp-step">{t("step")} {String(s.metadata?.step ?? "")}</span>
                <span className={`cp-node${internal ? " internal" : ""}`} data-testid="history-node" title={writer}>{label}</span>
              </button>
              {open && (
                <div className="cp-detail" data-testid="history-detail">
                  <div className="muted small">{t("stateAt")} · {messages.length} {t(messages.length === 1 ? "oneMessage" : "messages")}{s.next.length ? ` · ${t("nextNodes")}: ${s.next.join(", ")}` : ""}</div>
                  <ul className="cp-messages">
                    {messages.slice(-6).map((m, i) => {
                      const { who, what } = messageLine(m, t, textOf);
                      return <li key={i}><b>{who}</b> {what.slice(0, 160) || "…"}</li>;
                    })}
                  </ul>
                  <button type="button" className="btn small primary" onClick={() => onBranch(s)} data-testid="history-branch">
                    {t("branchFromHere")}
                  </button>
                </div>
              )}
            </li>
          );
        })}
      </ol>
    </aside>
  );
});
