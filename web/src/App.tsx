import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Thread } from "@langchain/langgraph-sdk";
import { describeError, isAdmin, LIST_QUERY, makeClient, storedKey, storeKey, threadTitle, titleFollowsQuestion, wasShown } from "./api";
import { AccessDown } from "./components/AccessDown";
import { Chat } from "./components/Chat";
import { Icon } from "./components/Icon";
import { LangSwitch } from "./components/LangSwitch";
import { OpsPage } from "./components/OpsPage";
import { Sidebar } from "./components/Sidebar";
import { SignIn } from "./components/SignIn";
import { browserLang, DICTS, I18nContext, type Key, type Lang } from "./i18n";
import { checkpointHash } from "./lib/ops";
import { mayHaveOlder, withOlder } from "./lib/olderThreads";
import { useAccessCheck } from "./lib/accessCheck";
import { useRefreshCycle } from "./lib/refreshCycle";
import { parseRoute, type Route } from "./lib/route";

type Theme = "light" | "dark";

const routeFromHash = (): Route => parseRoute(window.location.hash);

function initialTheme(): Theme {
  const saved = localStorage.getItem("orecast:theme");
  if (saved === "light" || saved === "dark") return saved;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function initialLang(): Lang {
  const saved = localStorage.getItem("orecast:lang");
  return saved === "zh" || saved === "en" ? saved : browserLang(navigator.languages ?? [navigator.language]);
}

export function App() {
  const [lang, setLang] = useState<Lang>(initialLang);
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [key, setKey] = useState<string | null>(storedKey);
  const [accessState, retryAccess, setAccess] = useAccessCheck(key);
  const { access } = accessState;
  const [route] = useState(routeFromHash);
  const [threadId, setThreadId] = useState<string | null>(route.threadId);
  const [showOps, setShowOps] = useState(route.ops);
  const [focusCheckpoint, setFocusCheckpoint] = useState<string | null>(route.checkpointId);
  const [admin, setAdmin] = useState<boolean | null>(null);
  const [chatKey, setChatKey] = useState(0);
  const [threads, setThreads] = useState<Thread[]>([]);
  /** Conversations older than the newest the list looks at, read a page at a time when asked for. */
  const [older, setOlder] = useState<{ threads: Thread[]; pages: number[] }>({ threads: [], pages: [] });
  const [listError, setListError] = useState<unknown>(null);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [historyOpen, setHistoryOpen] = useState(route.checkpointId !== null);
  /** The thread the address named that does not exist, or the open one deleted elsewhere, and which. */
  const [missing, setMissing] = useState<{ id: string; why: "threadMissing" | "threadDeleted" | "threadGone" } | null>(null);
  /** How many times the list was looked at: the open thread's stamp when the list does not hold it. */
  const [looks, setLooks] = useState(0);
  // Something that failed away from the conversation's own error box (rename, delete, stop): what, and why.
  const [notice, setNotice] = useState<{ what: Key | null; err: unknown } | null>(null);
  const report = useCallback((what: Key | null, err: unknown) => setNotice({ what, err }), []);
  const closeHistory = useCallback(() => setHistoryOpen(false), []);

  const i18n = useMemo(() => ({ lang, t: (k: Key) => DICTS[lang][k] }), [lang]);
  const { t } = i18n;
  const client = useMemo(() => makeClient(key), [key]);

  useEffect(() => {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    document.title = lang === "zh" ? "orecast · 铁矿石分析" : "orecast · iron-ore analyst";
    localStorage.setItem("orecast:lang", lang);
  }, [lang]);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem("orecast:theme", theme);
  }, [theme]);
  // The last resort for a failed request nobody waited for: said on the page, not only in the console.
  // The SDK's hook rejects again the errors it already gave the conversation, which shows them.
  useEffect(() => {
    const onRejection = (e: PromiseRejectionEvent) => {
      e.preventDefault();
      if (!wasShown(e.reason)) report(null, e.reason);
    };
    window.addEventListener("unhandledrejection", onRejection);
    return () => window.removeEventListener("unhandledrejection", onRejection);
  }, [report]);
  // Back from "down": a conversation open meanwhile could not be loaded, and says so; load it again.
  const wasDown = useRef(false);
  useEffect(() => {
    if (access === "down") wasDown.current = true;
    else if (access === "ok" && wasDown.current) {
      wasDown.current = false;
      if (threadId) setChatKey((k) => k + 1);
    }
  }, [access, threadId]);

  // The list as last seen: what a look compares with to tell whether anything changed.
  const listed = useRef("");
  const lookAtList = useCallback(async (): Promise<boolean> => {
    try {
      const list = await client.threads.search({ ...LIST_QUERY, select: [...LIST_QUERY.select] });
      const seen = list.map((th) => `${th.thread_id} ${th.updated_at} ${th.status} ${threadTitle(th)}`).join("\n");
      const changed = seen !== listed.current;
      listed.current = seen;
      if (changed) setThreads(list);
      setListError(null);
      setLooks((n) => n + 1);
      return changed;
    } catch (err) {
      // A key that stopped working (revoked, server restarted with other keys): ask again.
      if ((err as { status?: number }).status === 401) {
        // "needs-key", not "checking": when the key is already null (sign-out) setKey changes
        // nothing, the probe effect does not run again, and "checking" would stay forever.
        storeKey(null);
        setKey(null);
        setAccess("needs-key");
      } else setListError(err);
      return false;
    }
  }, [client]);
  useEffect(() => setOlder({ threads: [], pages: [] }), [client]);
  const readOlder = useCallback(async () => {
    try {
      const page = await client.threads.search({ ...LIST_QUERY, select: [...LIST_QUERY.select], offset: LIST_QUERY.limit + older.threads.length });
      setOlder((was) => ({ threads: [...was.threads, ...page], pages: [...was.pages, page.length] }));
    } catch (err) {
      report("olderFailed", err);
    }
  }, [client, older.threads.length, report]);
  const listedThreads = useMemo(() => withOlder(threads, older.threads), [threads, older.threads]);
  const changeOlder = (id: string, change: (th: Thread) => Thread | null) =>
    setOlder((was) => ({ ...was, threads: was.threads.flatMap((th) => (th.thread_id === id ? (change(th) ?? []) : [th])) }));
  const poke = useRefreshCycle(lookAtList, access === "ok");
  useEffect(() => poke(), [client, poke]);
  /** This page changed something: look at once, and have this browser's other tabs look too. */
  const refresh = useCallback(() => poke(true), [poke]);
  useEffect(() => {
    let live = true;
    if (access === "ok") isAdmin(key).then((a) => live && setAdmin(a));
    return () => {
      live = false;
    };
  }, [access, key]);

  // Straight to the sign-in box: no request with the old client may race it back to "checking".
  const signOut = useCallback(() => {
    storeKey(null);
    setKey(null);
    setAccess("needs-key");
  }, []);

  const open = useCallback((id: string | null) => {
    window.history.pushState(null, "", id ? `#/thread/${id}` : "#/");
    setThreadId(id);
    setShowOps(false);
    setFocusCheckpoint(null);
    setChatKey((k) => k + 1);
    setSidebarOpen(false);
    setMissing(null);
  }, []);
  const reloadChat = useCallback(() => {
    setChatKey((k) => k + 1);
    refresh();
  }, [refresh]);
  // A link to a thread that does not exist: say so and start a new conversation in its place,
  // rather than a raw 404 and a question box that could only fail again.
  const onMissing = useCallback((id: string) => {
    window.history.replaceState(null, "", "#/");
    setThreadId(null);
    setHistoryOpen(false);
    setChatKey((k) => k + 1);
    setMissing({ id, why: "threadMissing" });
  }, []);
  // The open thread was deleted elsewhere (another tab, the API, its TTL): a new conversation takes
  // its place, without remounting the chat, so a question being typed stays in the box.
  // `unsent`: a question sent to it is back in the box, which the notice says (a later look that
  // finds the thread gone too does not take that back).
  const onGone = useCallback((id: string, unsent = false) => {
    window.history.replaceState(null, "", "#/");
    setThreadId(null);
    setHistoryOpen(false);
    setMissing((shown) => (shown?.id === id && shown.why === "threadGone" ? shown : { id, why: unsent ? "threadGone" : "threadDeleted" }));
    poke();
  }, [poke]);
  // The thread made for a question the server refused (too long) was deleted: back to a new
  // conversation, without remounting the chat that shows why and holds the question.
  const onDiscarded = useCallback(() => {
    window.history.replaceState(null, "", "#/");
    setThreadId(null);
    setHistoryOpen(false);
    refresh();
  }, [refresh]);
  const openAt = useCallback((id: string, checkpointId: string | null) => {
    window.history.pushState(null, "", checkpointHash(id, checkpointId));
    setThreadId(id);
    setShowOps(false);
    setFocusCheckpoint(checkpointId);
    setHistoryOpen(true);
    setChatKey((k) => k + 1);
  }, []);
  const openOps = useCallback(() => {
    window.history.pushState(null, "", "#/ops");
    setShowOps(true);
    setSidebarOpen(false);
  }, []);
  useEffect(() => {
    const onPop = () => {
      const at = routeFromHash();
      setThreadId(at.threadId);
      setShowOps(at.ops);
      setFocusCheckpoint(at.checkpointId);
      if (at.checkpointId) setHistoryOpen(true);
      setChatKey((k) => k + 1);
      setMissing(null);
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  // A thread made by the first question: the URL follows it without remounting the running chat.
  const onThreadId = useCallback(
    (id: string) => {
      window.history.replaceState(null, "", `#/thread/${id}`);
      setThreadId(id);
      setMissing(null);
      refresh();
    },
    [refresh],
  );

  const active = listedThreads.find((th) => th.thread_id === threadId);
  const title = active ? threadTitle(active) : "";
  // What the chat watches to look for runs started elsewhere: the open thread's entry in the list,
  // or, when the list does not hold it (older than its 200; an older page read is not looked at
  // again), every look.
  const looked = threads.find((th) => th.thread_id === threadId);
  const stamp = looked ? `${looked.updated_at} ${looked.status}` : `unlisted ${looks}`;

  if (access === "checking") return <I18nContext.Provider value={i18n}><p className="muted center">{t("loading")}</p></I18nContext.Provider>;
  if (access === "needs-key") {
    return (
      <I18nContext.Provider value={i18n}>
        <SignIn onKey={(k) => { storeKey(k); setKey(k); }} lang={lang} onLang={setLang} />
      </I18nContext.Provider>
    );
  }

  return (
    <I18nContext.Provider value={i18n}>
      <div className="app">
        <header className="topbar">
          <button type="button" className="icon menu-btn" aria-label={t("menu")} aria-expanded={sidebarOpen} onClick={() => setSidebarOpen(!sidebarOpen)} data-testid="menu-button"><Icon name="menu" size={18} /></button>
          <span className="brand"><Icon name="logo" size={18} /> <span className="brand-text">{t("appName")}</span></span>
          <span className="spacer" />
          {admin && (
            <button type="button" className="btn small" aria-pressed={showOps} onClick={showOps ? () => open(threadId) : openOps} data-testid="ops-link">
              {t("ops")}
            </button>
          )}
          {threadId && !showOps && (
            <button type="button" className="btn small" aria-pressed={historyOpen} onClick={() => setHistoryOpen(!historyOpen)} data-testid="history-toggle">
              {t("history")}
            </button>
          )}
          <LangSwitch lang={lang} onLang={setLang} />
          <button
            type="button"
            className="icon"
            aria-label={`${t("theme")}: ${theme === "dark" ? t("dark") : t("light")}`}
            onClick={() => setTheme(theme === "dark" ? "light" : "dark")}
            data-testid="theme-toggle"
          >
            <Icon name={theme === "dark" ? "moon" : "sun"} size={18} />
          </button>
          {key && (
            <button type="button" className="btn small" onClick={signOut} data-testid="signout">{t("signOut")}</button>
          )}
        </header>
        {access === "down" && <AccessDown error={accessState.error} retryAt={accessState.retryAt} checking={accessState.checking} onRetry={retryAccess} />}
        {listError != null && <div className="error-box" role="alert">{describeError(listError, t)}</div>}
        {notice && (
          <div className="error-box" role="alert" data-testid="notice">
            <span>{t(notice.what ?? "errorTitle")}: {describeError(notice.err, t)}</span>
            <button type="button" className="icon" aria-label={t("close")} onClick={() => setNotice(null)} data-testid="notice-close"><Icon name="close" /></button>
          </div>
        )}
        {missing && (
          <div className="error-box" role="alert" data-testid="thread-missing">
            {t(missing.why)} <code>{missing.id}</code>
          </div>
        )}
        <div className="body">
          <Sidebar
            threads={listedThreads}
            activeId={threadId}
            open={sidebarOpen}
            onSelect={open}
            onNew={() => open(null)}
            onRename={async (id, name) => {
              await client.threads
                .update(id, { metadata: { title: name } })
                .then(() => changeOlder(id, (th) => ({ ...th, metadata: { ...th.metadata, title: name } })))
                .catch((err) => report("renameFailed", err));
              refresh();
            }}
            onDelete={async (id) => {
              try {
                await client.threads.delete(id);
                changeOlder(id, () => null);
                if (id === threadId) open(null);
              } catch (err) {
                report("deleteFailed", err);
              }
              refresh();
            }}
            onOlder={mayHaveOlder(threads.length, older.pages, LIST_QUERY.limit) ? readOlder : null}
          />
          {sidebarOpen && <div className="scrim" onClick={() => setSidebarOpen(false)} aria-hidden="true" />}
          {showOps ? (
            admin ? (
              <OpsPage apiKey={key} dark={theme === "dark"} onOpenCheckpoint={openAt} onBack={() => open(threadId)} />
            ) : (
              <main className="ops">
                <p className={admin === null ? "muted center" : "error-box"} role={admin === null ? "status" : "alert"} data-testid="ops-denied">
                  {admin === null ? t("loading") : t("adminOnly")}
                </p>
              </main>
            )
          ) : (
          <Chat
            key={chatKey}
            client={client}
            threadId={threadId}
            title={title}
            titleFollowsQuestion={active ? titleFollowsQuestion(active) : false}
            stamp={stamp}
            dark={theme === "dark"}
            historyOpen={historyOpen}
            onCloseHistory={closeHistory}
            focusCheckpoint={focusCheckpoint}
            onThreadId={onThreadId}
            onChanged={refresh}
            onMissing={onMissing}
            onGone={onGone}
            onReload={reloadChat}
            onDiscarded={onDiscarded}
            onNotice={report}
          />
          )}
        </div>
      </div>
    </I18nContext.Provider>
  );
}
