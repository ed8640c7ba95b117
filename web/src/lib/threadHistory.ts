/**
 * The thread's checkpoint history as the page keeps it: read whole once when a conversation opens,
 * then only what is new after each run.
 *
 * `useStream` read the newest 500 checkpoints (all branches, each with the whole conversation in its
 * values) again after every answer: in a conversation of 60 questions 56 MB built by the server for
 * each answer, to learn of the eight or so checkpoints the answer wrote. Checkpoint ids grow with
 * time on every branch (an edit's or a regenerate's too), so what a run wrote is the head of the
 * newest-first history, down to the newest checkpoint already known: it is read with the API's own
 * `limit` and `before` paging, a page about the size of the last run, until a known one shows up.
 */

export interface HistoryState {
  checkpoint: { checkpoint_id?: string | null };
  parent_checkpoint?: { checkpoint_id?: string | null } | null;
  metadata?: Record<string, unknown> | null;
}

/** `client.threads.getHistory`: newest first, at most `limit`, older than `before` when given. */
export type ReadHistory<S> = (options: { limit: number; before?: string }) => Promise<S[]>;

const idOf = (state: HistoryState): string => state.checkpoint.checkpoint_id ?? "";

/** The first page when the known history shows no run (a thread written with `update_state`). */
const FIRST_PAGE = 10;
/** The largest first page: a longer run is paged on, in pages twice as large each time. */
const LARGEST_FIRST_PAGE = 64;

/**
 * How many checkpoints the newest run wrote: the head down to the run's input checkpoint (a resumed
 * run counts the one it resumed too). The next run is likely to write about as many. Null when the
 * history read holds no run's input.
 */
export function lastRunSize(history: readonly HistoryState[]): number | null {
  const start = history.findIndex((state) => state.metadata?.source === "input" || state.parent_checkpoint == null);
  return start < 0 ? null : start + 1;
}

/**
 * The history after a run: the new head pages read from the server, then the known checkpoints older
 * than the last page, the newest `limit` in all. The known checkpoints a page returned again are
 * taken from it (a head's tasks change when a run resumes it). Reads the whole history (`limit`)
 * when nothing is known.
 */
export async function readNewer<S extends HistoryState>(read: ReadHistory<S>, known: readonly S[] | undefined, limit: number): Promise<S[]> {
  if (!known || known.length === 0) return read({ limit });
  const ids = new Set(known.map(idOf));
  const fresh: S[] = [];
  // The last run's size and two more: the known head and its parent come back, and end the paging.
  const guess = lastRunSize(known);
  let page = Math.min(limit, guess === null ? FIRST_PAGE : Math.min(LARGEST_FIRST_PAGE, Math.max(4, guess + 2)));
  let before: string | undefined;
  for (;;) {
    const states = await read(before === undefined ? { limit: page } : { limit: page, before });
    fresh.push(...states);
    const reachedKnown = states.some((state) => ids.has(idOf(state)));
    if (reachedKnown || states.length < page || fresh.length >= limit) break;
    before = idOf(states[states.length - 1]);
    page = Math.min(page * 2, limit - fresh.length);
  }
  return mergeNewest(fresh, known, limit);
}

/** `fresh` (a newest-first head of the history) and then the `known` checkpoints older than its last. */
export function mergeNewest<S extends HistoryState>(fresh: readonly S[], known: readonly S[], limit: number): S[] {
  if (fresh.length === 0) return known.slice(0, limit);
  const oldest = idOf(fresh[fresh.length - 1]);
  const seen = new Set(fresh.map(idOf));
  const older = known.filter((state) => !seen.has(idOf(state)) && idOf(state) < oldest);
  return [...fresh, ...older].slice(0, limit);
}
