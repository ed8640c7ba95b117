import { Client } from "@langchain/langgraph-sdk";
import type { Thread, ThreadState } from "@langchain/langgraph-sdk";
import type { OpsStats } from "./lib/ops";
import { probeOutcome, type RunProbe } from "./lib/rejoin";
import { expandShared } from "./lib/sharedHistory";
import { autoTitle, isTitleOf } from "./lib/title";

export const ASSISTANT_ID = "orecast";
const KEY_STORAGE = "orecast:apiKey";

/** The API lives on the page's own origin (`orecast serve` serves both). */
export const apiUrl = (): string => window.location.origin;

export function storedKey(): string | null {
  return window.sessionStorage.getItem(KEY_STORAGE);
}

export function storeKey(key: string | null): void {
  if (key) window.sessionStorage.setItem(KEY_STORAGE, key);
  else window.sessionStorage.removeItem(KEY_STORAGE);
}

/** Our service reads the key from `x-api-key` (or `Authorization: Bearer`). */
export function authHeaders(key: string | null): Record<string, string> {
  return key ? { "x-api-key": key } : {};
}

export function makeClient(key: string | null): Client {
  return new Client({ apiUrl: apiUrl(), defaultHeaders: authHeaders(key) });
}

export type Access = "ok" | "needs-key" | "down";

/** What the access check found, and for "down" why (the server unreachable, or its error answer). */
export interface AccessCheck {
  access: Access;
  error: unknown;
}

/** A failed answer in the SDK's HTTPError shape (message "HTTP <status>: <body>", `status`, `text`), so
 * describeError tells a database outage from another failure as it does for the SDK's own calls. */
async function httpError(res: Response): Promise<Error> {
  const text = await res.text().catch(() => "");
  return Object.assign(new Error(`HTTP ${res.status}: ${text}`), { status: res.status, text });
}

/** Whether `key` (or no key) may use the API: one cheap authenticated call. */
export async function probeAccess(key: string | null): Promise<AccessCheck> {
  try {
    const res = await fetch(`${apiUrl()}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", ...authHeaders(key) },
      body: JSON.stringify({ limit: 1, select: ["thread_id"] }), // not a whole thread's values
    });
    if (res.status === 401 || res.status === 403) return { access: "needs-key", error: null };
    if (res.ok) return { access: "ok", error: null };
    return { access: "down", error: await httpError(res) };
  } catch (err) {
    return { access: "down", error: err };
  }
}

/** Whether the caller may open the operations view (admins; everyone when the service has no keys). */
export async function isAdmin(key: string | null): Promise<boolean> {
  try {
    const res = await fetch(`${apiUrl()}/ops/access`, { headers: authHeaders(key) });
    return res.ok && (await res.json()).admin === true;
  } catch {
    return false;
  }
}

/** The operations figures; throws with the server's message (403 for a user who is not an admin). */
export async function fetchOpsStats(key: string | null): Promise<OpsStats> {
  const res = await fetch(`${apiUrl()}/ops/stats`, { headers: authHeaders(key) });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body?.message ?? `${res.status} ${res.statusText}`);
  return body as OpsStats;
}

/** The newest `limit` checkpoints of a thread, as `threads.getHistory` gives them, read in orecast's
 * shared form (each message once: lib/sharedHistory.ts); an error as the SDK's (`httpError`). */
export async function readSharedHistory<S>(threadId: string, limit: number): Promise<ThreadState<S>[]> {
  const res = await fetch(`${apiUrl()}/threads/${encodeURIComponent(threadId)}/history/shared`, {
    method: "POST",
    headers: { "content-type": "application/json", ...authHeaders(storedKey()) },
    body: JSON.stringify({ limit }),
  });
  if (!res.ok) throw await httpError(res);
  return expandShared<ThreadState<S>>(await res.json());
}

type Msg = { type?: string; content?: unknown };

/** Plain text of a message's content (a string or a list of content blocks). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === "string" ? b : b && typeof b === "object" && "text" in b ? String(b.text) : ""))
      .join("");
  }
  return "";
}

/**
 * What the conversation list asks of `POST /threads/search`: the fields it shows and compares, and
 * of the values only the first message (the title of a thread without one, see `firstQuestion`).
 * The whole values (every answer, tool result and chart of 200 threads) were most of a look's bytes,
 * and the list looks every 2 to 16 s; the open conversation reads its own state.
 */
export const LIST_QUERY = {
  limit: 200,
  sortBy: "updated_at",
  sortOrder: "desc",
  select: ["thread_id", "updated_at", "status", "metadata"],
  extract: { first_type: "values.messages[0].type", first_content: "values.messages[0].content" },
} as const;

/**
 * The first question of the thread's head (the branch its last run went on), if it has one: from its
 * values, or from what the list's `extract` took of them (the head's first message, when a question).
 */
export function firstQuestion(thread: Thread): string | null {
  const values = thread.values as { messages?: Msg[] } | null | undefined;
  if (values?.messages) {
    const first = values.messages.find((m) => m.type === "human");
    return first ? textOf(first.content) : null;
  }
  const extracted = thread.extracted;
  return extracted?.first_type === "human" ? textOf(extracted.first_content) : null;
}

/** The title (see lib/title.ts): the thread's metadata `title`, else its first question, else nothing. */
export function threadTitle(thread: Thread): string {
  const title = thread.metadata?.title;
  if (typeof title === "string" && title.trim()) return title.trim();
  const first = firstQuestion(thread);
  return first ? autoTitle(first) : "";
}

/** Whether the thread's title is still the one its first question gave (not the user's own). */
export function titleFollowsQuestion(thread: Thread): boolean {
  const title = thread.metadata?.title;
  const first = firstQuestion(thread);
  return typeof title !== "string" || !title.trim() || (first !== null && isTitleOf(title, first));
}

/** A report's download address (see web/SERVER_NEEDS.md): by thread, by file name. */
export function reportUrl(threadId: string, reportPath: string): string {
  const file = reportPath.split(/[\\/]/).pop() ?? reportPath;
  return `${apiUrl()}/threads/${encodeURIComponent(threadId)}/reports/${encodeURIComponent(file)}`;
}

/** Fetch with the key header and hand the bytes to the browser as a download. */
export async function downloadWithKey(url: string, key: string | null, filename: string): Promise<void> {
  const res = await fetch(url, { headers: authHeaders(key) });
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
  saveBlob(await res.blob(), filename);
}

export function saveBlob(blob: Blob, filename: string): void {
  const href = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = href;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 1000);
}

/** Whether the server answers for a run again (lib/rejoin.ts): one plain request, not the SDK's, whose
 * own retries would wait up to ~30 s for a server that is down. */
export async function probeRun(threadId: string, runId: string): Promise<RunProbe> {
  const url = `${apiUrl()}/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}`;
  try {
    return probeOutcome((await fetch(url, { headers: authHeaders(storedKey()) })).status);
  } catch {
    return probeOutcome(null);
  }
}

/** The HTTP status of an error thrown by the SDK's client (its `HTTPError`), if it is one. */
export function httpStatus(err: unknown): number | null {
  const status = (err as { status?: unknown } | null | undefined)?.status;
  return typeof status === "number" ? status : null;
}

/** The `error` code of the server's JSON error body ("too_large", "not_found", …), if there is one. */
export function errorCode(err: unknown): string | null {
  const body = (err as { text?: unknown } | null | undefined)?.text;
  if (httpStatus(err) === null || typeof body !== "string") return null;
  try {
    const code = (JSON.parse(body) as { error?: unknown }).error;
    return typeof code === "string" ? code : null;
  } catch {
    return null;
  }
}

/** The request never reached the server (down, network gone): fetch's TypeError, as the SDK rethrows it. */
export function isUnreachable(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return httpStatus(err) === null && /Failed to fetch|Unable to connect|NetworkError|Load failed/i.test(message);
}

/**
 * A run's stream lost its server for longer than the SDK's reconnects last (the server restarting,
 * the network gone): the run itself may go on, or be recovered by the restarted server.
 */
export function isStreamLost(err: unknown): boolean {
  return isUnreachable(err) || (err instanceof Error && err.name === "MaxReconnectAttemptsError");
}

/**
 * The error a stopped run leaves on the step it was in (LangGraph stores the task's
 * `CancelledError`): read back after a reload, it is the Stop, not a failure.
 */
export function isCancellation(err: unknown): boolean {
  return /^'?CancelledError\(.*\)'?$/.test(errorText(err).trim());
}

/** A readable message for an error thrown by the SDK or fetch: the server's JSON `message`, not its whole body. */
export function errorText(err: unknown): string {
  const body = (err as { text?: unknown } | null | undefined)?.text;
  if (httpStatus(err) !== null && typeof body === "string") {
    try {
      const parsed = JSON.parse(body) as { message?: unknown; detail?: unknown };
      const message = parsed.message ?? parsed.detail;
      if (typeof message === "string" && message) return `${message} (HTTP ${httpStatus(err)})`;
    } catch {
      // not JSON: the SDK's own "HTTP <status>: <body>" below
    }
  }
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

/**
 * An error in the page's language where it has its own words (the server unreachable, its database
 * down), else the server's own message, introduced in the page's language when the server failed (5xx).
 */
export function describeError(
  err: unknown, t: (key: "unreachable" | "databaseUnavailable" | "serverError") => string,
): string {
  if (isUnreachable(err)) return t("unreachable");
  const code = errorCode(err);
  if (code === "database_unavailable" || code === "database_timeout") return t("databaseUnavailable");
  const status = httpStatus(err);
  return status !== null && status >= 500 ? `${t("serverError")}: ${errorText(err)}` : errorText(err);
}

/**
 * Errors the page already shows where they happened (the conversation's load or run): the SDK's
 * hook hands them to `onError`, then rejects the same error again with nobody to catch it.
 */
const shownErrors = new WeakSet<object>();

export function markShown(err: unknown): void {
  if (err !== null && typeof err === "object") shownErrors.add(err);
}

export function wasShown(err: unknown): boolean {
  return err !== null && typeof err === "object" && shownErrors.has(err);
}
