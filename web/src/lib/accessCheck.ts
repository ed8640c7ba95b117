import { useCallback, useEffect, useState } from "react";
import { probeAccess, storeKey, type Access } from "../api";

/**
 * The page's access check (may this key, or no key, use the API?) is the first request it makes, and
 * nothing else runs until it says "ok". A failure (server down, network gone, database unavailable)
 * was its last word: the page stayed on its error until reloaded. It is checked again after 1, 2, 4 …
 * up to 30 s, at once when the browser is back online or the tab is shown again, or when asked.
 */
export const ACCESS_RETRY_MIN_MS = 1000;
export const ACCESS_RETRY_MAX_MS = 30000;

/** The wait before check number `attempt + 1` after `attempt` failed ones (from 0). */
export function accessRetryDelay(attempt: number): number {
  return Math.min(ACCESS_RETRY_MAX_MS, ACCESS_RETRY_MIN_MS * 2 ** Math.max(0, attempt));
}

export interface AccessState {
  access: Access | "checking";
  /** Why it is "down" (for `describeError`), and when the next check is due (ms since the epoch). */
  error: unknown;
  retryAt: number | null;
  /** Whether a check is under way now (the first one, or a retry). */
  checking: boolean;
}

/**
 * The access of `key`, checked again while "down". Also returns `retryNow` (check at once, the waits
 * start again from the shortest) and `set` (the page learnt it another way: a 401, a sign-out).
 */
export function useAccessCheck(key: string | null): [AccessState, () => void, (access: Access) => void] {
  const [state, setState] = useState<AccessState>({ access: "checking", error: null, retryAt: null, checking: true });
  const [round, setRound] = useState(0); // bumped by retryNow: a fresh series of checks
  const retryNow = useCallback(() => setRound((n) => n + 1), []);
  const set = useCallback((access: Access) => setState({ access, error: null, retryAt: null, checking: false }), []);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    let down = false;
    let busy = false;
    const check = async () => {
      clearTimeout(timer);
      busy = true;
      setState((s) => ({ ...s, checking: true }));
      const { access, error } = await probeAccess(key);
      busy = false;
      if (!live) return;
      if (access === "needs-key") storeKey(null); // a stored key that no longer works is forgotten
      down = access === "down";
      if (!down) {
        setState({ access, error: null, retryAt: null, checking: false });
        return;
      }
      const wait = accessRetryDelay(attempt++);
      setState({ access, error, retryAt: Date.now() + wait, checking: false });
      timer = setTimeout(() => void check(), wait);
    };
    // Back online, or shown again after a while away: check now rather than at the end of a long wait.
    const again = () => {
      if (document.visibilityState !== "visible" || !down || busy) return;
      attempt = 0;
      void check();
    };
    void check();
    window.addEventListener("online", again);
    document.addEventListener("visibilitychange", again);
    return () => {
      live = false;
      clearTimeout(timer);
      window.removeEventListener("online", again);
      document.removeEventListener("visibilitychange", again);
    };
  }, [key, round]);

  return [state, retryNow, set];
}
