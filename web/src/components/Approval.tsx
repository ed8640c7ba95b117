import { useState } from "react";
import { useI18n } from "../i18n";
import { descriptionIn, type Decision, type Pending } from "../lib/approval";
import { Icon } from "./Icon";

interface Props {
  pending: Pending;
  busy: boolean;
  onResume: (resume: unknown) => void;
}

/** The pending sensitive action(s): approve, edit the arguments, or reject with a reason. */
export function Approval({ pending, busy, onResume }: Props) {
  const { t, lang } = useI18n();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(() => pending.actions.map((a) => JSON.stringify(a.args, null, 2)));
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const allowed = (d: string) => pending.actions.every((a) => a.allowed.includes(d));
  const all = (d: Decision) => onResume(pending.resume(pending.actions.map(() => d)));

  const submitEdit = () => {
    const args = draft.map(argsOf);
    if (args.some((a) => a === null)) {
      // The browser's JSON.parse message is in its own language, and a list or a number parses
      // but is no set of arguments: say what is wrong in the page's language.
      setError(t("invalidArgs"));
      return;
    }
    const decisions: Decision[] = pending.actions.map((a, i) => ({
      type: "edit",
      edited_action: { name: a.name, args: args[i] as Record<string, unknown> },
    }));
    setError(null);
    onResume(pending.resume(decisions));
  };

  return (
    <section className="approval" data-testid="approval-panel" aria-label={t("approvalTitle")}>
      <h3><Icon name="warn" /> {t("approvalTitle")}</h3>
      {pending.actions.map((a, i) => (
        <div key={i} className="approval-action" data-testid="approval-action" data-tool={a.name}>
          <div>
            <code>{a.name}</code> {a.description && <span className="muted">{descriptionIn(a.description, lang)}</span>}
          </div>
          {editing ? (
            <textarea
              aria-label={`${t("editArgs")} ${a.name}`}
              data-testid="approval-edit-args"
              value={draft[i]}
              rows={Math.min(12, draft[i].split("\n").length + 1)}
              onChange={(e) => setDraft(draft.map((d, j) => (j === i ? e.target.value : d)))}
            />
          ) : (
            <dl className="args">
              {Object.entries(a.args).map(([k, v]) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd>{typeof v === "string" ? v || "—" : JSON.stringify(v)}</dd>
                </div>
              ))}
            </dl>
          )}
        </div>
      ))}
      {error && <p className="error-text" role="alert">{error}</p>}
      {!editing && allowed("reject") && (
        <input
          className="reason"
          aria-label={t("rejectReason")}
          placeholder={t("rejectReason")}
          data-testid="approval-reason"
          value={reason}
          onChange={(e) => setReason(e.target.value)}
        />
      )}
      <div className="row">
        {editing ? (
          <>
            <button type="button" className="btn primary" disabled={busy} onClick={submitEdit} data-testid="approval-submit-edit">
              {t("submitEdit")}
            </button>
            <button type="button" className="btn" onClick={() => setEditing(false)}>{t("cancel")}</button>
          </>
        ) : (
          <>
            {allowed("approve") && (
              <button type="button" className="btn primary" disabled={busy} onClick={() => all({ type: "approve" })} data-testid="approval-approve">
                {t("approve")}
              </button>
            )}
            {allowed("edit") && (
              <button type="button" className="btn" disabled={busy} onClick={() => setEditing(true)} data-testid="approval-edit">
                {t("edit")}
              </button>
            )}
            {allowed("reject") && (
              <button
                type="button"
                className="btn danger"
                disabled={busy}
                onClick={() => all(reason.trim() ? { type: "reject", message: reason.trim() } : { type: "reject" })}
                data-testid="approval-reject"
              >
                {t("reject")}
              </button>
            )}
          </>
        )}
      </div>
    </section>
  );
}

/** Edited arguments: a JSON object, else null. */
function argsOf(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
