import { useState } from "react";
import { textOf } from "../api";
import { useI18n } from "../i18n";
import type { MessageLike } from "../lib/turns";
import { hideChartPaths } from "../lib/chartCaption";
import { asksToSend } from "../lib/enterKey";
import { drawnCharts, hideReportPaths, pairToolRuns, type ToolRun } from "../lib/tools";
import type { ToolResultLike } from "../lib/tools";
import { BranchSwitcher } from "./BranchSwitcher";
import { Markdown } from "./Markdown";
import { ToolCard } from "./ToolCard";

export interface BranchInfo {
  branch: string | undefined;
  options: string[] | undefined;
}

interface HumanProps {
  message: MessageLike;
  branch: BranchInfo;
  busy: boolean;
  onEdit: ((text: string) => void) | null;
  onBranch: (branch: string) => void;
}

/** A question: its text, an Edit that resubmits it as a new branch, and the branch switcher. */
export function HumanTurn({ message, branch, busy, onEdit, onBranch }: HumanProps) {
  const { t } = useI18n();
  const text = textOf(message.content);
  const [draft, setDraft] = useState<string | null>(null);
  if (draft !== null) {
    // As the composer: nothing is sent while an answer streams; the edit stays in its box until then.
    const submit = () => {
      const q = draft.trim();
      if (!q || busy) return;
      onEdit?.(q);
      setDraft(null);
    };
    return (
      <div className="msg human editing" data-testid="message" data-role="human">
        <textarea
          aria-label={t("edit")}
          data-testid="edit-input"
          value={draft}
          autoFocus
          rows={Math.min(8, draft.split("\n").length + 1)}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") setDraft(null);
            if (asksToSend(e)) {
              e.preventDefault();
              submit();
            }
          }}
        />
        <p className="muted small">{t("editing")}</p>
        <div className="row">
          <button
            type="button"
            className="btn primary small"
            disabled={!draft.trim() || busy}
            data-testid="edit-submit"
            onClick={submit}
          >
            {t("send")}
          </button>
          <button type="button" className="btn small" onClick={() => setDraft(null)}>{t("cancel")}</button>
        </div>
      </div>
    );
  }
  return (
    <div className="msg human" data-testid="message" data-role="human" data-message-id={message.id}>
      <div className="bubble">{text}</div>
      <div className="msg-tools">
        <BranchSwitcher branch={branch.branch} options={branch.options} onSelect={onBranch} />
        {onEdit && (
          <button type="button" className="link" disabled={busy} onClick={() => setDraft(text)} data-testid="edit-button">
            {t("edit")}
          </button>
        )}
      </div>
    </div>
  );
}

interface AssistantProps {
  messages: MessageLike[];
  results: ToolResultLike[];
  branch: BranchInfo;
  streaming: boolean;
  /** The turn's run was stopped: its tool calls without a result never ran. */
  stopped: boolean;
  busy: boolean;
  dark: boolean;
  threadId: string | null;
  durationOf: (run: ToolRun, ai: MessageLike) => number | null;
  onRegenerate: (() => void) | null;
  onBranch: (branch: string) => void;
}

/** The assistant's turn: its messages' text and tool cards in order, Regenerate, branches. */
export function AssistantTurn(props: AssistantProps) {
  const { messages, results, branch, streaming, stopped, busy, dark, threadId, durationOf, onRegenerate, onBranch } = props;
  const { t, lang } = useI18n();
  // The page draws the turn's charts and links its reports: the answer need not name server files.
  const charts = drawnCharts(results);
  const shown = (m: MessageLike) => hideReportPaths(hideChartPaths(textOf(m.content), charts, lang), results);
  const text = messages.map(shown).join("\n\n");
  const empty = !text.trim() && messages.every((m) => !m.tool_calls?.length);
  return (
    <div className="msg ai" data-testid="message" data-role="ai" data-message-id={messages[0]?.id}>
      {messages.map((m, i) => {
        const body = shown(m);
        const runs = pairToolRuns(m.tool_calls ?? [], results);
        return (
          <div key={m.id ?? i} className="ai-part">
            {body.trim() && <Markdown text={body} />}
            {runs.map((run, j) => (
              <ToolCard
                key={run.call.id ?? j}
                run={run}
                pending={streaming}
                stopped={stopped}
                dark={dark}
                threadId={threadId}
                durationMs={durationOf(run, m)}
              />
            ))}
          </div>
        );
      })}
      {empty && streaming && <p className="muted thinking">{t("thinking")}</p>}
      <div className="msg-tools">
        <BranchSwitcher branch={branch.branch} options={branch.options} onSelect={onBranch} />
        {!streaming && text.trim() && (
          <CopyButton text={text} />
        )}
        {onRegenerate && (
          <button type="button" className="link" disabled={busy} onClick={onRegenerate} data-testid="regenerate-button">
            {t("regenerate")}
          </button>
        )}
      </div>
    </div>
  );
}

/** Copy, and say whether it worked. The Clipboard API exists only on https and localhost: a page
 * served over plain http on the network copies through a selection instead. */
function CopyButton({ text }: { text: string }) {
  const { t } = useI18n();
  const [done, setDone] = useState<"copied" | "copyFailed" | null>(null);
  const copy = async () => {
    let ok: boolean;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      ok = copyBySelection(text);
    }
    setDone(ok ? "copied" : "copyFailed");
    setTimeout(() => setDone(null), 2000);
  };
  return (
    <button type="button" className="link" aria-live="polite" onClick={() => void copy()} data-testid="copy-button">
      {t(done ?? "copy")}
    </button>
  );
}

function copyBySelection(text: string): boolean {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    area.remove();
  }
}
