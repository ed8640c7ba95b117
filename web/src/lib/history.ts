/** Checkpoint rows for the history panel: which node wrote each checkpoint. */

export interface StateLike {
  checkpoint: { checkpoint_id?: string | null };
  parent_checkpoint?: { checkpoint_id?: string | null } | null;
  metadata?: Record<string, unknown> | null;
  tasks?: { name: string }[];
  next?: string[];
  created_at?: string | null;
}

/**
 * The node(s) whose writes made `state`: the tasks its parent checkpoint had scheduled. A
 * checkpoint without a parent is the thread's input ("input"); without the parent in the list
 * (older than the page loaded), the checkpoint's `source` is the best we know.
 */
export function writerOf(state: StateLike, byId: Map<string, StateLike>): string {
  const parentId = state.parent_checkpoint?.checkpoint_id;
  if (!parentId) return String(state.metadata?.source ?? "input");
  const parent = byId.get(parentId);
  const names = parent?.tasks?.map((task) => task.name) ?? [];
  return names.length > 0 ? [...new Set(names)].join(", ") : String(state.metadata?.source ?? "");
}

export function indexById<S extends StateLike>(states: S[]): Map<string, S> {
  return new Map(states.filter((s) => s.checkpoint.checkpoint_id).map((s) => [s.checkpoint.checkpoint_id as string, s]));
}
