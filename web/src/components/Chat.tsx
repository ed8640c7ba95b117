import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { Client, Message, ThreadState } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { ASSISTANT_ID, describeError, errorCode, httpStatus, isCancellation, isStreamLost, markShown, probeRun, readSharedHistory, saveBlob, textOf } from "../api";
import { localeOf, useI18n, type Key } from "../i18n";
import { pendingApproval } from "../lib/approval";
import { newestBranch, type TreeSequence } from "../lib/branches";
import { exportName, toJson, toMarkdown } from "../lib/exportConversation";
import { forkSwitch, forkView, LIVE_BRANCH, startFork, type BranchMeta, type LiveFork } from "../lib/liveFork";
import { useNarrow } from "../lib/narrow";
import { useThreadHistory } from "../lib/useThreadHistory";
import { rejoinDelay } from "../lib/rejoin";
import { autoTitle, exportTitle, isTitleOf } from "../lib/title";
import { groupTurns, type MessageLike } from "../lib/turns";
import type { ToolRun } from "../lib/tools";
import { Approval } from "./Approval";
import { Composer } from "./Composer";
import { HistoryPanel } from "./HistoryPanel";
import { AssistantTurn, HumanTurn } from "./Turns";

type State = { messages: Message[] };
type Input = { messages: { type: "human"; content: string }[] };

interface Props {
  client: Client;
  threadId: string | null;
  title: string;
  /** The title is the one the first question gave (lib/title.ts): an edit of that question retitles it. */
  titleFollowsQuestion: boolean;
  /** Changes when the open thread changed on the server (seen by the page's look at the list). */
  stamp: string;
  dark: boolean;
  historyOpen: boolean;
  /** The checkpoint the history panel opens at (a link from the operations view). */
  focusCheckpoint?: string | null;
  onCloseHistory: () => void;
  onThreadId: (id: string) => void;
  onChanged: () => void;
  /** The open thread does not exist (a stale link, deleted elsewhere). */
  onMissing: (id: string) => void;
  /** The open thread was deleted since it was opened (another tab, the API, its TTL); `unsent`: a
   * question sent to it is back in the box. */
  onGone: (id: string, unsent?: boolean) => void;
  /** Load the open thread again (its history could not be read). */
  onReload: () => void;
  /** The thread made for the first question was deleted again (the server refused the question). */
  onDiscarded: () => void;
  /** Something failed that the conversation does not show in place (a Stop the server did not get). */
  onNotice: (what: Key, err: unknown) => void;
}

const HISTORY_LIMIT = 500;
/** The history panel's rows: the newest of the history the conversation reads. */
const PANEL_ROWS = 200;
/** Where the SDK keeps the run to re-join after a reload (`reconnectOnMount`). */
const rejoinKey = (threadId: string) => `lg:stream:${threadId}`;

/** The conversation: one `useStream` owns the thread's messages, runs, branches and interrupts. */
export function Chat({ client, threadId, title, titleFollowsQuestion, stamp, dark, historyOpen, focusCheckpoint, onCloseHistory, onThreadId, onChanged, onMissing, onGone, onReload, onDiscarded, onNotice }: Props) {
  const { t, lang } = useI18n();
  /** A thread the SDK made for this page's first question, before any run of it was created. */
  const createdHere = useRef<string | null>(null);
  // The page's own history (lib/useThreadHistory.ts): the head shown first, then only what a run wrote.
  const thread = useThreadHistory<State>(client, threadId, HISTORY_LIMIT, (id) => createdHere.current === id, readSharedHistory);
  const stream = useStream<State>({
    client,
    assistantId: ASSISTANT_ID,
    threadId,
    onThreadId: (id) => {
      createdHere.current = id;
      onThreadId(id);
    },
    reconnectOnMount: true,
    thread,
    // Still set: with it the SDK builds the branch tree and reads the history (`thread.mutate`) after each run.
    fetchStateHistory: { limit: HISTORY_LIMIT },
    onFinish: () => onChanged(),
    onCreated: (run) => {
      runId.current = run.run_id;
      // An edit or a regenerate: its switcher from now on (not when it was sent: it may have waited
      // behind a run still streaming, whose messages are not the fork's).
      setLiveFork(pendingFork.current);
      setViewing(null);
      pendingFork.current = null;
      known.current.add(run.run_id);
      createdHere.current = null;
      // Once the edited first question is a run of the thread (not before: a refused one is not).
      const title = retitle.current;
      retitle.current = null;
      if (title) {
        client.threads
          .update(run.thread_id, { metadata: { title } })
          .then(() => onChanged())
          .catch((err) => onNotice("renameFailed", err));
      }
    },
    onError: (err) => {
      markShown(err);
      onChanged();
    },
  });
  const runId = useRef<string | null>(null);
  /** Runs whose outcome the page shows: there when the thread opened, started here, or followed. */
  const known = useRef(new Set<string>());
  /** The title the thread takes when the run just sent is created (its first question was edited). */
  const retitle = useRef<string | null>(null);
  const busyNow = useRef(false);
  busyNow.current = stream.isLoading;
  const streamNow = useRef(stream);
  streamNow.current = stream;
  // Read before the SDK's own re-join consumes the stored run id.
  const [mounted] = useState(() => ({ threadId, stored: threadId ? sessionStorage.getItem(rejoinKey(threadId)) : null }));
  const [forkFrom, setForkFrom] = useState<ThreadState<State> | null>(null);
  /** The fork (an edit, a regenerate) whose run is going on, and the older branch looked at meanwhile. */
  const [liveFork, setLiveFork] = useState<LiveFork | null>(null);
  const [viewing, setViewing] = useState<string | null>(null);
  const pendingFork = useRef<LiveFork | null>(null);
  const [stopped, setStopped] = useState(false);
  const lastInput = useRef<{ input: Input | null; checkpoint?: ThreadState<State>["checkpoint"] } | null>(null);
  const timings = useRef(new Map<string, { start: number; end?: number }>());
  /** The run going on was submitted from this page (not re-joined or followed). */
  const startedHere = useRef(false);
  const list = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const narrow = useNarrow();

  useEffect(() => {
    setForkFrom(null);
    setStopped(false);
    setLiveFork(null);
    setViewing(null);
    pendingFork.current = null;
  }, [threadId]);
  // The fork's run ended: the history read again gives its messages their siblings.
  useEffect(() => {
    if (stream.isLoading) return;
    setLiveFork(null);
    setViewing(null);
  }, [stream.isLoading]);

  // Show the branch of the newest checkpoint whenever a new one arrives (the thread opened, a run
  // ended): the SDK would show each fork's newest child, which is not where a run continued on an
  // older branch went. Switching branches by hand leaves the newest checkpoint as it was. The head
  // shown before the history is in is the newest checkpoint too, alone: its branch is learnt later.
  const newest = newestBranch(stream.experimental_branchTree as TreeSequence | undefined);
  const followed = useRef<string | null>(null);
  const newestKey = newest ? `${newest.checkpointId} ${newest.branch}` : null;
  useLayoutEffect(() => {
    if (!newest || stream.isLoading || newestKey === followed.current) return;
    followed.current = newestKey;
    if (newest.branch !== stream.branch) stream.setBranch(newest.branch);
  }, [newestKey, stream.isLoading]);

  // A question over the server's request size limit never ran: the copy shown as sent (optimistically)
  // goes, and it is put back in the box to be shortened (sending it again as it is, Retry, would only
  // fail again). A thread made for it alone holds nothing: it is deleted, not left empty in the list.
  // Nor did one sent to a thread deleted (in another tab) since it was opened: it is kept the same way,
  // and the notice above a new conversation says why (as when the page's look finds it deleted).
  const tooLarge = errorCode(stream.error) === "too_large";
  const gone = threadId !== null && httpStatus(stream.error) === 404;
  const unsent = tooLarge || gone;
  const refusedCopy = unsent && stream.messages.at(-1)?.type === "human" && !stream.messages.at(-1)?.id;
  const streamed = refusedCopy ? stream.messages.slice(0, -1) : stream.messages;
  // While a fork's run goes on, an older sibling's branch is shown from the history read before it.
  const lookingBack = liveFork !== null && viewing !== null;
  const branchHead = lookingBack ? (stream.history?.at(-1)?.values as State | undefined)?.messages : undefined;
  const shown = forkView(liveFork, viewing, streamed, branchHead);
  const messages = (forkFrom ? forkFrom.values.messages ?? [] : shown) as unknown as MessageLike[];
  const turns = useMemo(() => groupTurns(messages), [messages]);
  const firstHuman = turns.find((turn) => turn.kind === "human")?.message;
  // Not found when opened (nothing was sent to it): a stale link.
  const missing = gone && messages.length === 0 && lastInput.current === null;
  useEffect(() => {
    if (missing && threadId) onMissing(threadId);
  }, [missing]);
  const busy = stream.isLoading;
  const cancelled = stream.error != null && isCancellation(stream.error);
  const [refused, setRefused] = useState(false);
  const [restore, setRestore] = useState<{ text: string } | null>(null);
  useEffect(() => {
    const question = lastInput.current?.input?.messages[0]?.content;
    if (unsent && question) setRestore({ text: question });
    if (gone && !missing && threadId) onGone(threadId, Boolean(question));
    if (!tooLarge) return;
    setRefused(true);
    const made = createdHere.current;
    if (made && made === threadId) {
      createdHere.current = null;
      client.threads.delete(made).catch(() => undefined).finally(onDiscarded);
    }
  }, [unsent]);

  // Live tool durations: a call first seen while streaming starts its clock; its result stops it.
  // A run that pauses (approval, stop) drops unfinished clocks, so waiting is not counted.
  // Only for runs this page started: a run re-joined after a reload, or followed from another
  // tab, replays its calls when joined, long after they began; those take the checkpoints' times.
  const prevBusy = useRef(busy);
  useEffect(() => {
    const now = performance.now();
    if (!busy) {
      for (const [id, timing] of timings.current) if (timing.end === undefined) timings.current.delete(id);
      if (prevBusy.current) startedHere.current = false;
    }
    prevBusy.current = busy;
    for (const m of messages) {
      if (m.type === "ai" && busy && startedHere.current) {
        for (const call of m.tool_calls ?? []) {
          if (call.id && !timings.current.has(call.id) && !messages.some((r) => r.tool_call_id === call.id)) {
            timings.current.set(call.id, { start: now });
          }
        }
      }
      if (m.type === "tool" && m.tool_call_id) {
        const timing = timings.current.get(m.tool_call_id);
        if (timing && timing.end === undefined) timing.end = now;
      }
    }
  }, [messages, busy]);

  // Follow the answer as it streams, unless the reader has scrolled up to read something else.
  useEffect(() => {
    const el = list.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [messages, stream.interrupt, stream.error]);

  const metaOf = (m: MessageLike, index?: number) =>
    forkFrom ? undefined : stream.getMessagesMetadata(m as unknown as Message, index);
  /** A message's "‹ 2 / 3 ›": the history's, or the fork's while its run goes on. */
  const branchOf = (meta: BranchMeta | undefined, index: number) => {
    const live = forkFrom ? undefined : forkSwitch(liveFork, viewing, index);
    return { branch: (live ?? meta)?.branch, options: (live ?? meta)?.branchOptions };
  };
  const selectBranch = (branch: string) => {
    if (liveFork) {
      setViewing(branch === LIVE_BRANCH ? null : branch);
      if (branch === LIVE_BRANCH) return;
    }
    stream.setBranch(branch);
  };

  const createdAt = useMemo(
    () => new Map((stream.history ?? []).map((s) => [s.checkpoint.checkpoint_id ?? "", s.created_at])),
    [stream.history],
  );
  // After a reload, a duration is read from the checkpoints: from the one the tools step started
  // at (the result's parent, so time spent waiting for an approval is not counted) to the result's.
  const durationOf = (run: ToolRun, ai: MessageLike): number | null => {
    const live = run.call.id ? timings.current.get(run.call.id) : undefined;
    if (live?.end !== undefined) return live.end - live.start;
    if (!run.result) return null;
    const seen = metaOf(run.result as unknown as MessageLike)?.firstSeenState;
    const from = createdAt.get(seen?.parent_checkpoint?.checkpoint_id ?? "") ?? metaOf(ai)?.firstSeenState?.created_at;
    return from && seen?.created_at ? Date.parse(seen.created_at) - Date.parse(from) : null;
  };

  // The question shown first: when it is edited, the title it gave follows the new one.
  const shownFirst = textOf(messages.find((m) => m.type === "human")?.content);
  const send = useCallback(
    (text: string, checkpoint?: ThreadState<State>["checkpoint"], replacesFirst = false, fork: LiveFork | null = null) => {
      const input: Input = { messages: [{ type: "human", content: text }] };
      pendingFork.current = fork;
      lastInput.current = { input, checkpoint };
      retitle.current =
        threadId && replacesFirst && (titleFollowsQuestion || isTitleOf(title, shownFirst)) ? autoTitle(text) : null;
      startedHere.current = true;
      runId.current = null;
      pinned.current = true;
      setForkFrom(null);
      setStopped(false);
      setRefused(false);
      void stream.submit(input, {
        checkpoint: checkpoint ?? undefined,
        metadata: threadId ? undefined : { title: autoTitle(text) },
        optimisticValues: checkpoint
          ? undefined
          : (prev) => ({ ...prev, messages: [...((prev.messages as Message[] | undefined) ?? []), { type: "human", content: text }] }),
      });
      if (!threadId) setTimeout(onChanged, 600);
    },
    [stream, threadId, onChanged, title, titleFollowsQuestion, shownFirst],
  );

  const rerun = (checkpoint: ThreadState<State>["checkpoint"] | null | undefined, fork: LiveFork | null = null) => {
    pendingFork.current = fork;
    lastInput.current = { input: null, checkpoint: checkpoint ?? undefined };
    startedHere.current = true;
    runId.current = null;
    setStopped(false);
    void stream.submit(null, { checkpoint: checkpoint ?? undefined });
  };

  const retry = async () => {
    const last = lastInput.current;
    // A run that failed half-way left its next step in the head checkpoint: run that step again.
    // The SDK reads no history after a failed run, so the head is asked of the server.
    // A request that never became a run (network, server down) is sent again as it was.
    const head = runId.current && threadId ? await client.threads.getState<State>(threadId).catch(() => null) : null;
    if (head && head.next.length > 0 && !stream.interrupt) rerun(head.checkpoint);
    else if (last?.input) send(last.input.messages[0].content, last.checkpoint);
    else if (last) rerun(last.checkpoint);
    // Nothing was sent from this page: the thread itself failed to load (server down), so load it again.
    else onReload();
  };

  // The run is cancelled here, not by the SDK (which cancels the run it stored for re-joining but
  // leaves a failed cancel, the server gone, unhandled): a Stop the server did not get is said so.
  const stop = () => {
    setStopped(true);
    const stored = threadId ? sessionStorage.getItem(rejoinKey(threadId)) : null;
    const id = runId.current ?? stored;
    if (threadId) sessionStorage.removeItem(rejoinKey(threadId));
    // The list's "running" badge goes once the server has ended the run (the cancel does not wait).
    void stream.stop().finally(() => setTimeout(onChanged, 1000));
    if (!id || !threadId) return;
    client.runs.cancel(threadId, id).catch((err) => {
      // 404: the run had already ended, so there was nothing left to stop.
      if (httpStatus(err) === 404) return;
      setStopped(false);
      onNotice("stopFailed", err);
    });
  };

  // This tab's run whose stream was lost (the server gone longer than the SDK's reconnects): the
  // page said "cannot reach the server" and kept the half answer for good, while the restarted
  // server recovered the run and finished it. The page asks for the run after 0.5, 1, 2, 4, then
  // every 8 s (lib/rejoin.ts), at once when the list's look sees the thread change or the browser
  // is back online, saying "正在重新连接…" meanwhile; once the server answers for it, the run is
  // joined again: the server replays its events, so the page shows it going on, or its end.
  const lostRun = busy || stopped || stream.error == null || !isStreamLost(stream.error) ? null : runId.current;
  const [reconnecting, setReconnecting] = useState(false);
  const wakeRejoin = useRef<(() => void) | null>(null);
  useEffect(() => {
    const id = threadId;
    if (!lostRun || !id) return;
    let live = true;
    let asking = false;
    let attempt = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setReconnecting(true);
    const ask = async () => {
      if (!live || asking) return;
      clearTimeout(timer);
      asking = true;
      const answer = await probeRun(id, lostRun);
      asking = false;
      if (!live) return;
      if (answer === "down") {
        timer = setTimeout(() => void ask(), rejoinDelay(attempt++));
        return;
      }
      live = false;
      setReconnecting(false); // "gone": the error stays, with Retry
      if (answer === "back" && !busyNow.current) void streamNow.current.joinStream(lostRun).catch(() => undefined);
    };
    timer = setTimeout(() => void ask(), rejoinDelay(attempt++));
    wakeRejoin.current = () => void ask();
    window.addEventListener("online", wakeRejoin.current);
    return () => {
      live = false;
      clearTimeout(timer);
      if (wakeRejoin.current) window.removeEventListener("online", wakeRejoin.current);
      wakeRejoin.current = null;
      setReconnecting(false);
    };
  }, [lostRun, threadId]);
  useEffect(() => wakeRejoin.current?.(), [stamp]);

  // Runs this tab did not start (another tab, or a reload before the run id was stored) are followed
  // one after the other: on opening, the running one (else the queued one, whose stream starts when
  // it does); then each new one the thread's run list shows when the page's look at the conversation
  // list saw the thread change (`stamp`), or this tab's own run ended. A later run that already
  // finished is joined too (the server replays its events), so the page ends on the thread's last
  // state. Runs this tab started are its own; one it stored is re-joined by the SDK.
  const followDue = useRef(true);
  const wakeFollow = useRef<(() => void) | null>(null);
  useEffect(() => {
    followDue.current = true;
    wakeFollow.current?.();
  }, [stamp, busy]);
  useEffect(() => {
    const id = threadId;
    if (!id) return;
    followDue.current = true;
    let live = true;
    let opened = false;
    const next = async (): Promise<string | null> => {
      // Newest first.
      const runs = await client.runs.list(id, { limit: 10 });
      if (!opened) {
        opened = true;
        const active = mounted.stored || createdHere.current === id
          ? undefined
          : (runs.filter((r) => r.status === "running").at(-1) ?? runs.filter((r) => r.status === "pending").at(-1));
        for (const r of runs) if (!active || r.created_at < active.created_at) known.current.add(r.run_id);
      }
      return runs.filter((r) => !known.current.has(r.run_id)).at(-1)?.run_id ?? null;
    };
    const follow = async () => {
      while (live) {
        if (!followDue.current || busyNow.current) {
          await new Promise<void>((wake) => (wakeFollow.current = wake));
          continue;
        }
        followDue.current = false;
        const run = await next().catch((err) => {
          if (httpStatus(err) === 404 && live) {
            live = false; // nothing will run there
            // Deleted since it was opened; not found at once is a stale link, which the load says.
            if (opened) onGone(id);
          }
          return null;
        });
        if (!live) return;
        if (run && !busyNow.current) {
          known.current.add(run);
          runId.current = run;
          await streamNow.current.joinStream(run);
          followDue.current = true; // a later run may have been queued meanwhile
        }
      }
    };
    void follow();
    return () => {
      live = false;
      wakeFollow.current?.();
      wakeFollow.current = null;
    };
  }, [client, threadId]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || !stream.isLoading) return;
      // Esc in a field of its own (a rename, an edit, the search, an approval's reason) is that
      // field's, to cancel or leave it: it stopped the run too. In the question box it stops.
      const target = e.target instanceof Element ? e.target : null;
      if (target?.closest("input, textarea, select, [contenteditable]") && !target.closest(".composer")) return;
      stop();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [stream]);

  const panelStates = useMemo(
    () => (thread.complete ? ((thread.data ?? []).slice(0, PANEL_ROWS) as ThreadState[]) : null),
    [thread.complete, thread.data],
  );
  // The same function from render to render: the history panel is not drawn again for each token.
  const branchFromHistory = useCallback(
    (state: ThreadState) => {
      setForkFrom(state as ThreadState<State>);
      // On a phone the panel covers the conversation: show where the next question goes.
      if (narrow) onCloseHistory();
    },
    [narrow, onCloseHistory],
  );

  const pending = forkFrom ? null : pendingApproval(stream.interrupts ?? []);
  const exportAs = (kind: "md" | "json") => {
    const when = new Date();
    const id = threadId ?? "new";
    const name = exportTitle(title, shownFirst);
    const body = kind === "md" ? toMarkdown(name, id, messages, when) : toJson(name, id, messages, when);
    saveBlob(new Blob([body], { type: kind === "md" ? "text/markdown" : "application/json" }), exportName(name, kind));
  };

  return (
    <div className="chat-wrap">
      <main className="chat" aria-busy={busy}>
        <div className="chat-bar">
          <h1 className="chat-title" data-testid="chat-title">{title || (threadId ? autoTitle(shownFirst) || t("untitled") : t("newConversation"))}</h1>
          {messages.length > 0 && (
            <div className="row">
              {/* On a phone the formats alone: the conversation's title keeps the room. */}
              <button type="button" className="btn small" aria-label={t("exportMd")} title={t("exportMd")} onClick={() => exportAs("md")} data-testid="export-md">{narrow ? "MD" : t("exportMd")}</button>
              <button type="button" className="btn small" aria-label={t("exportJson")} title={t("exportJson")} onClick={() => exportAs("json")} data-testid="export-json">{narrow ? "JSON" : t("exportJson")}</button>
            </div>
          )}
        </div>
        <div
          className="messages"
          data-testid="message-list"
          role="log"
          aria-live="polite"
          ref={list}
          onScroll={(e) => {
            const el = e.currentTarget;
            pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
          }}
        >
          {stream.isThreadLoading && messages.length === 0 && <p className="muted">{t("loading")}</p>}
          {/* Not for a thread that failed to load: it is not empty, only not shown. */}
          {!stream.isThreadLoading && messages.length === 0 && !(threadId && stream.error != null) && <Welcome onPick={(q) => send(q)} />}
          {turns.map((turn, i) => {
            if (turn.kind === "human") {
              const meta = metaOf(turn.message, turn.index);
              const parent = meta?.firstSeenState?.parent_checkpoint;
              return (
                <HumanTurn
                  key={turn.message.id ?? `h${i}`}
                  message={turn.message}
                  branch={branchOf(meta, turn.index)}
                  busy={busy}
                  onEdit={parent ? (text) => send(text, parent, turn.message === firstHuman, startFork(turn.index, meta, stream.branch)) : null}
                  onBranch={selectBranch}
                />
              );
            }
            const first = turn.messages[0];
            const meta = first ? metaOf(first, turn.index) : undefined;
            const parent = meta?.firstSeenState?.parent_checkpoint;
            const live = busy && !lookingBack && i === turns.length - 1;
            return (
              <AssistantTurn
                key={first?.id ?? `a${i}`}
                messages={turn.messages}
                results={turn.results}
                branch={branchOf(meta, turn.index)}
                streaming={live}
                stopped={(stopped || cancelled) && !busy && i === turns.length - 1}
                busy={busy}
                dark={dark}
                threadId={threadId}
                durationOf={durationOf}
                onRegenerate={parent && !busy ? () => rerun(parent, startFork(turn.index, meta, stream.branch)) : null}
                onBranch={selectBranch}
              />
            );
          })}
          {busy && !lookingBack && turns[turns.length - 1]?.kind === "human" && (
            <div className="msg ai" data-testid="thinking"><p className="muted thinking">{t("thinking")}</p></div>
          )}
          {pending && !busy && (
            <Approval
              key={JSON.stringify(pending.actions)}
              pending={pending}
              busy={busy}
              onResume={(resume) => {
                lastInput.current = null;
                pendingFork.current = null;
                startedHere.current = true;
                void stream.submit(null, { command: { resume } });
              }}
            />
          )}
          {(stopped || cancelled) && !busy && <p className="muted small stopped" data-testid="stopped-note">{t("stopped")}</p>}
          {stream.error != null && !busy && !cancelled && !tooLarge && !gone && (
            <div className="error-box" role="alert" data-testid="run-error">
              <strong>{t("errorTitle")}</strong>
              <span>{describeError(stream.error, t)}</span>
              {/* Rejoining by itself: a Retry would ask the question again beside the run going on. */}
              {reconnecting ? (
                <span className="muted small" role="status" data-testid="reconnecting">{t("reconnecting")}</span>
              ) : (
                <button type="button" className="btn small" onClick={() => void retry()} data-testid="retry-button">{t("retry")}</button>
              )}
            </div>
          )}
          {refused && !busy && (
            <div className="error-box" role="alert" data-testid="run-error">
              <strong>{t("errorTitle")}</strong>
              <span>{t("tooLarge")}</span>
            </div>
          )}
        </div>
        {forkFrom && (
          <div className="fork-banner" data-testid="fork-banner">
            <span>
              {t("branchFromHere")}: {t("step")} {String(forkFrom.metadata?.step ?? "?")} ·{" "}
              {forkFrom.created_at ? new Date(forkFrom.created_at).toLocaleString(localeOf(lang)) : ""}
            </span>
            <button type="button" className="btn small" onClick={() => setForkFrom(null)} data-testid="fork-cancel">{t("cancel")}</button>
          </div>
        )}
        <Composer
          busy={busy}
          onSend={(text) => send(text, forkFrom?.checkpoint, forkFrom !== null && !(forkFrom.values.messages ?? []).some((m) => m.type === "human"))}
          onStop={stop}
          restore={restore}
        />
      </main>
      {historyOpen && threadId && (
        <HistoryPanel
          states={panelStates}
          error={thread.error}
          focus={focusCheckpoint ?? null}
          onClose={onCloseHistory}
          onBranch={branchFromHistory}
        />
      )}
    </div>
  );
}

function Welcome({ onPick }: { onPick: (q: string) => void }) {
  const { t } = useI18n();
  const hour = new Date().getHours();
  return (
    <div className="welcome" data-testid="welcome">
      <h2>{t(hour < 12 ? "welcomeMorning" : hour < 18 ? "welcomeAfternoon" : "welcomeEvening")}</h2>
      <p className="muted">{t("suggestions")}</p>
      <div className="suggestions">
        {(["s1", "s2", "s3"] as const).map((k) => (
          <button key={k} type="button" className="btn" onClick={() => onPick(t(k))} data-testid="suggestion">
            {t(k)}
          </button>
        ))}
      </div>
    </div>
  );
}
