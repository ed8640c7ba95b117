/**
 * The branch that holds the thread's newest checkpoint. `useStream` shows, at every fork it is not
 * told about, the fork's newest child; a run continued on an older branch (or a branch made
 * inside one) ends in that older child, so after the run, or after a reload, the page would show
 * another branch than the one just written to. Following the newest checkpoint shows the last run.
 */

interface StateLike {
  checkpoint?: { checkpoint_id?: string | null } | null;
  created_at?: string | null;
}

/** The SDK's branch tree (`experimental_branchTree`): nodes carry the fork path that leads to them. */
export type TreeItem<S extends StateLike = StateLike> =
  | { type: "node"; value: S; path: string[] }
  | { type: "fork"; items: TreeSequence<S>[] };
export interface TreeSequence<S extends StateLike = StateLike> {
  type: "sequence";
  items: TreeItem<S>[];
}

export interface NewestBranch {
  checkpointId: string;
  /** The value `setBranch` takes: the fork path joined by ">" ("" when the thread never forked). */
  branch: string;
}

/** Later checkpoint first: by `created_at`, then by id (LangGraph's ids grow with time). */
function isNewer(a: StateLike, b: StateLike): boolean {
  const at = a.created_at ?? "";
  const bt = b.created_at ?? "";
  if (at !== bt) return at > bt;
  return (a.checkpoint?.checkpoint_id ?? "") > (b.checkpoint?.checkpoint_id ?? "");
}

export function newestBranch(tree: TreeSequence | null | undefined): NewestBranch | null {
  let best: { value: StateLike; path: string[] } | null = null;
  const queue: TreeSequence[] = tree ? [tree] : [];
  while (queue.length > 0) {
    for (const item of (queue.shift() as TreeSequence).items) {
      if (item.type === "fork") queue.push(...item.items);
      else if (item.value.checkpoint?.checkpoint_id && (!best || isNewer(item.value, best.value))) best = item;
    }
  }
  const id = best?.value.checkpoint?.checkpoint_id;
  return best && id ? { checkpointId: id, branch: best.path.join(">") } : null;
}
