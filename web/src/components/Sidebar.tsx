import { useState } from "react";
import type { Thread } from "@langchain/langgraph-sdk";
import { threadTitle } from "../api";
import { localeOf, useI18n } from "../i18n";
import { formatDate } from "../lib/dateFormat";
import { Icon } from "./Icon";

interface Props {
  threads: Thread[];
  activeId: string | null;
  open: boolean;
  onSelect: (id: string) => void;
  onNew: () => void;
  onRename: (id: string, title: string) => Promise<void>;
  onDelete: (id: string) => Promise<void>;
  /** Older conversations than those listed may exist: read the next page of them. */
  onOlder: (() => Promise<void>) | null;
}

/** Conversations, newest first: search, open, rename, delete (confirmed), new. */
export function Sidebar({ threads, activeId, open, onSelect, onNew, onRename, onDelete, onOlder }: Props) {
  const { t } = useI18n();
  const [query, setQuery] = useState("");
  const [reading, setReading] = useState(false);
  const q = query.trim().toLowerCase();
  const shown = threads.filter((th) => !q || (threadTitle(th) || t("untitled")).toLowerCase().includes(q));
  return (
    <nav className={`sidebar${open ? " open" : ""}`} aria-label={t("menu")} data-testid="sidebar">
      <button type="button" className="btn primary wide" onClick={onNew} data-testid="new-conversation">
        ＋ {t("newConversation")}
      </button>
      <input
        type="search"
        className="search"
        aria-label={t("search")}
        placeholder={t("search")}
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        data-testid="thread-search"
      />
      {shown.length === 0 && <p className="muted small">{t(threads.length > 0 ? "noMatches" : "noConversations")}</p>}
      <ul className="threads" data-testid="thread-list">
        {shown.map((th) => (
          <ThreadItem
            key={th.thread_id}
            thread={th}
            active={th.thread_id === activeId}
            onSelect={() => onSelect(th.thread_id)}
            onRename={(title) => onRename(th.thread_id, title)}
            onDelete={() => onDelete(th.thread_id)}
          />
        ))}
      </ul>
      {/* Also when the search found nothing: what it looks for may be older. */}
      {onOlder && (
        <button
          type="button"
          className="btn small wide"
          disabled={reading}
          onClick={() => {
            setReading(true);
            void onOlder().finally(() => setReading(false));
          }}
          data-testid="thread-older"
        >
          {reading ? t("loading") : t("olderConversations")}
        </button>
      )}
    </nav>
  );
}

interface ItemProps {
  thread: Thread;
  active: boolean;
  onSelect: () => void;
  onRename: (title: string) => Promise<void>;
  onDelete: () => Promise<void>;
}

function ThreadItem({ thread, active, onSelect, onRename, onDelete }: ItemProps) {
  const { t, lang } = useI18n();
  const title = threadTitle(thread) || t("untitled");
  const [mode, setMode] = useState<"view" | "rename" | "confirm">("view");
  const [draft, setDraft] = useState(title);
  const when = new Date(thread.updated_at);
  const commit = () => {
    const name = draft.trim();
    if (name && name !== title) void onRename(name);
    setMode("view");
  };
  return (
    <li
      className={`thread${active ? " active" : ""}`}
      data-testid="thread-item"
      data-thread-id={thread.thread_id}
      data-status={thread.status}
    >
      {mode === "rename" ? (
        <input
          className="rename"
          aria-label={t("rename")}
          data-testid="thread-rename-input"
          value={draft}
          autoFocus
          onChange={(e) => setDraft(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.nativeEvent.isComposing) commit();
            if (e.key === "Escape") setMode("view");
          }}
        />
      ) : (
        // `title`: the whole title on hover, where the list's width cuts it.
        <button type="button" className="thread-open" title={title} aria-current={active ? "page" : undefined} onClick={onSelect} data-testid="thread-open">
          <span className="thread-title" data-testid="thread-title">{title}</span>
          <span className="thread-meta">
            {thread.status === "busy" && <span className="badge busy">{t("running")}</span>}
            {thread.status === "interrupted" && <span className="badge waiting">{t("approvalTitle")}</span>}
            {thread.status === "error" && <span className="badge error">{t("failed")}</span>}
            {formatDate(when, localeOf(lang), "date")} {formatDate(when, localeOf(lang), "hourMinute")}
          </span>
        </button>
      )}
      {mode === "view" && (
        <span className="thread-actions">
          <button type="button" className="icon" aria-label={`${t("rename")} ${title}`} title={t("rename")} onClick={() => { setDraft(title); setMode("rename"); }} data-testid="thread-rename"><Icon name="edit" /></button>
          <button type="button" className="icon" aria-label={`${t("delete")} ${title}`} title={t("delete")} onClick={() => setMode("confirm")} data-testid="thread-delete"><Icon name="trash" /></button>
        </span>
      )}
      {mode === "confirm" && (
        <div className="confirm" role="alertdialog" aria-label={t("confirmDelete")} data-testid="thread-delete-confirm">
          <p>{t("confirmDelete")}</p>
          <button type="button" className="btn danger small" onClick={() => { setMode("view"); void onDelete(); }} data-testid="thread-delete-yes">{t("delete")}</button>
          <button type="button" className="btn small" onClick={() => setMode("view")} data-testid="thread-delete-no">{t("cancel")}</button>
        </div>
      )}
    </li>
  );
}
