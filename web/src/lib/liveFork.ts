/**
 * A fork while its run is going on. Editing a question (or regenerating an answer) sends it from the
 * replaced message's parent checkpoint; `useStream` gives a message its siblings ("‹ 2 / 2 ›") from the
 * thread's history, which it reads again only when the run has ended. So the new message had no
 * switcher for as long as its answer streamed, and the branch it replaced could not be looked at
 * meanwhile. The page knows the fork when it sends it: the replaced message's siblings, then the new
 * one, last (where the history puts it once read again).
 */

/** The switcher's name for the branch being written by the run (not yet a path of checkpoints). */
export const LIVE_BRANCH = "live";

export interface LiveFork {
  /** Index in the message list of the replaced message (the edited question, the regenerated turn's first). */
  at: number;
  /** The branches at that fork: the replaced message's siblings (as `setBranch` names them), then `LIVE_BRANCH`. */
  options: string[];
}

export interface BranchMeta {
  branch?: string;
  branchOptions?: string[];
}

/**
 * The fork made by replacing the message at `at`, whose metadata (`getMessagesMetadata`) is `replaced`
 * and which is on `current` (`useStream`'s `branch`). A message without siblings is on no fork yet: it
 * is reached by the branch shown now.
 */
export function startFork(at: number, replaced: BranchMeta | undefined, current: string): LiveFork {
  const siblings = replaced?.branchOptions?.length ? replaced.branchOptions : [replaced?.branch ?? current];
  return { at, options: [...siblings, LIVE_BRANCH] };
}

/** What the switcher of the message at `index` shows while the fork's run goes on (`viewing`: an older
 * sibling's branch, or null for the live one); undefined for any other message. */
export function forkSwitch(fork: LiveFork | null, viewing: string | null, index: number): BranchMeta | undefined {
  if (!fork || index !== fork.at) return undefined;
  return { branch: viewing ?? LIVE_BRANCH, branchOptions: fork.options };
}

/** The messages to show: the run's as they stream, or those of the older branch being looked at
 * (the head of that branch in the history read before the run). */
export function forkView<T>(fork: LiveFork | null, viewing: string | null, live: T[], branchHead: T[] | undefined): T[] {
  return fork && viewing !== null ? branchHead ?? [] : live;
}
