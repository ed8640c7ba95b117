/**
 * The page's address: `#/thread/<id>`, `#/thread/<id>/checkpoint/<checkpoint id>` (the history panel
 * open at that checkpoint: the operations view links failed calls there), or `#/ops`.
 */
export interface Route {
  ops: boolean;
  threadId: string | null;
  checkpointId: string | null;
}

export function parseRoute(hash: string): Route {
  if (hash === "#/ops") return { ops: true, threadId: null, checkpointId: null };
  const match = /^#\/thread\/([\w-]+)(?:\/checkpoint\/([^/]+))?$/.exec(hash);
  return { ops: false, threadId: match?.[1] ?? null, checkpointId: match?.[2] ? decodeURIComponent(match[2]) : null };
}
