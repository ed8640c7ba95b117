import { useCallback, useEffect, useRef } from "react";

/**
 * How the page learns what changed elsewhere (another tab, another browser, `orecast chat`): it looks
 * at the conversation list now and then, while visible. The server's thread stream
 * (`GET /threads/{id}/stream`) was no substitute: it sees only the runs still going at its own poll
 * (of 5 short runs it reported 1, then 2) and stays open, silent, after the thread is deleted.
 */
export const REFRESH_MIN_MS = 2000;
export const REFRESH_MAX_MS = 16000;
/** Tabs of this browser tell each other at once (no wait for the next look) that they changed something. */
const CHANNEL = "orecast:changes";

/** The wait before the next look: the shortest after a change, twice the last one after none, up to the longest. */
export function nextDelay(previous: number, changed: boolean): number {
  return changed ? REFRESH_MIN_MS : Math.min(REFRESH_MAX_MS, Math.max(REFRESH_MIN_MS, previous * 2));
}

/**
 * Calls `look` (it says whether anything changed) while the page is visible and `enabled`, waiting
 * `nextDelay` between looks; nothing while hidden, and a look at once when it is shown again.
 * Returns `poke`: look now and start again from the shortest wait — this page changed something
 * (`share`: other tabs of this browser are told to look too).
 */
export function useRefreshCycle(look: () => Promise<boolean>, enabled: boolean): (share?: boolean) => void {
  const current = useRef(look);
  current.current = look;
  const wake = useRef<() => void>(() => undefined);
  const tellOthers = useRef<() => void>(() => undefined);

  useEffect(() => {
    if (!enabled) return;
    let live = true;
    let due = true; // a look is wanted now (the first, a poke, the page shown again)
    let delay = REFRESH_MIN_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let resume: (() => void) | null = null;
    const sleep = (ms: number | null) =>
      new Promise<void>((resolve) => {
        resume = resolve;
        if (ms !== null) timer = setTimeout(resolve, ms);
      });
    wake.current = () => {
      due = true;
      delay = REFRESH_MIN_MS;
      clearTimeout(timer);
      resume?.();
    };
    const onVisibility = () => {
      if (document.visibilityState === "visible") wake.current();
    };
    document.addEventListener("visibilitychange", onVisibility);
    const channel = typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel(CHANNEL);
    channel?.addEventListener("message", () => wake.current());
    tellOthers.current = () => channel?.postMessage("changed");

    void (async () => {
      while (live) {
        if (document.visibilityState !== "visible") {
          await sleep(null); // until shown again (or poked)
          continue;
        }
        due = false;
        const changed = await current.current().catch(() => false);
        if (!live) return;
        delay = nextDelay(delay, changed);
        if (!due) await sleep(delay);
      }
    })();
    return () => {
      live = false;
      clearTimeout(timer);
      resume?.();
      wake.current = () => undefined;
      tellOthers.current = () => undefined;
      document.removeEventListener("visibilitychange", onVisibility);
      channel?.close();
    };
  }, [enabled]);

  return useCallback((share = false) => {
    wake.current();
    if (share) tellOthers.current();
  }, []);
}
