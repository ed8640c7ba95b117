/**
 * The conversation list looks at the newest `LIST_QUERY.limit` conversations again and again; older
 * ones were out of reach (not listed, not found by the search, which filters what is listed). They
 * are read a page at a time when asked for ("显示更早的对话"), and shown after the newest.
 */
import type { Thread } from "@langchain/langgraph-sdk";

/** The newest, then the older pages read so far without those that are among the newest again. */
export function withOlder(newest: Thread[], older: Thread[]): Thread[] {
  const listed = new Set(newest.map((th) => th.thread_id));
  return [...newest, ...older.filter((th) => !listed.has(th.thread_id))];
}

/** Whether there may be more: the newest filled a page, and so did the last older page read. */
export function mayHaveOlder(newest: number, olderPages: number[], limit: number): boolean {
  return newest >= limit && (olderPages.length === 0 || olderPages[olderPages.length - 1] >= limit);
}
