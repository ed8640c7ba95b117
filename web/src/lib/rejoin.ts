/**
 * Joining again a run whose stream was lost. The SDK reconnects for about 30 s; once it gives up
 * (the server down longer), the page said "cannot reach the server" and joined the run again only
 * when its look at the conversation list saw the thread move on, which backs off to 16 s between
 * looks: a server back within a second still left the page waiting up to 16 s, and nothing said it
 * would rejoin at all. The page now asks for the run itself after 0.5, 1, 2, 4, then every 8 s
 * (at once when the list's look sees the thread change, or the browser is back online), says
 * "正在重新连接… / Reconnecting…" meanwhile, and joins the run as soon as the server answers for it.
 */

export const REJOIN_FIRST_MS = 500;
export const REJOIN_MAX_MS = 8000;

/** The wait before look number `attempt + 1` after `attempt` ones (from 0) found the server still down. */
export function rejoinDelay(attempt: number): number {
  return Math.min(REJOIN_MAX_MS, REJOIN_FIRST_MS * 2 ** Math.max(0, attempt));
}

/** What the answer to `GET /threads/{id}/runs/{run}` says about joining the run again: "back" (the
 * server has it: join), "gone" (it, or the right to see it, is not there: stop, the error stays with
 * Retry), "down" (no answer, an overloaded or failing server: look again later). `status` is null
 * when no answer came. */
export type RunProbe = "back" | "gone" | "down";

export function probeOutcome(status: number | null): RunProbe {
  if (status === null || status >= 500 || status === 429 || status === 408) return "down";
  return status >= 200 && status < 300 ? "back" : "gone";
}
