import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import { readNewer } from "./threadHistory";

/**
 * The history `useStream` works from (its `thread` option: the SDK then reads none of its own and
 * calls `mutate` after each run and Stop). Opening a conversation reads its head state and its whole
 * history at once: the head (one checkpoint) comes back first and shows the conversation while the
 * history (up to `limit` checkpoints, the branches and each message's fork point) is still on its
 * way. The thread counts as loaded from the head on (`isLoading`), so a run stored for re-joining
 * after a reload is joined then, not once the history is in (30 s for 60 questions of the analyst).
 * After a run only the new checkpoints are read (threadHistory.ts).
 */
export interface ThreadHistory<S extends Record<string, unknown>> {
  data: ThreadState<S>[] | undefined;
  error: unknown;
  isLoading: boolean;
  /** The whole history has been read (not only the head state). */
  complete: boolean;
  mutate: (threadId?: string) => Promise<ThreadState<S>[] | undefined>;
}

interface Loaded<S extends Record<string, unknown>> {
  threadId: string | null;
  data: ThreadState<S>[] | undefined;
  error: unknown;
  isLoading: boolean;
  complete: boolean;
}

/** `skipOpen(threadId)`: the thread was just made for a run of this page, whose end reads it (as the SDK
 * does not read the history of the thread it is streaming to). `readWhole`: the opening's read of the
 * whole history (default `threads.getHistory`; the page reads it in the shared form, api.ts). */
export function useThreadHistory<S extends Record<string, unknown>>(
  client: Client,
  threadId: string | null,
  limit: number,
  skipOpen: (threadId: string) => boolean,
  readWhole?: (threadId: string, limit: number) => Promise<ThreadState<S>[]>,
): ThreadHistory<S> {
  const [loaded, setLoaded] = useState<Loaded<S>>(() => ({ threadId: null, data: undefined, error: undefined, isLoading: false, complete: false }));
  /** What is known of the open thread, for the reads after a run (a render's value may be older). */
  const current = useRef<Loaded<S>>(loaded);
  /** The reads of one thread follow each other: a run's read waits for the opening one. */
  const queue = useRef<Promise<unknown>>(Promise.resolve());
  const clientRef = useRef(client);
  clientRef.current = client;

  const update = useCallback((id: string, change: (was: Loaded<S>) => Loaded<S>) => {
    if (current.current.threadId !== id) return; // another thread opened meanwhile
    current.current = change(current.current);
    setLoaded(current.current);
  }, []);

  useEffect(() => {
    const opening = threadId !== null && !skipOpen(threadId);
    current.current = { threadId, data: undefined, error: undefined, isLoading: opening, complete: false };
    setLoaded(current.current);
    if (!opening || threadId === null) return;
    const threads = clientRef.current.threads;
    const head = threads
      .getState<S>(threadId)
      .then((state) => update(threadId, (was) => (was.data ? was : { ...was, data: state.checkpoint ? [state] : [], isLoading: false })))
      .catch(() => undefined); // the history read says why
    const whole = (readWhole ? readWhole(threadId, limit) : threads.getHistory<S>(threadId, { limit })).then(
      (data) => update(threadId, (was) => ({ ...was, data, error: undefined, isLoading: false, complete: true })),
      (error) => update(threadId, (was) => ({ ...was, error, isLoading: false })),
    );
    queue.current = Promise.all([head, whole]);
  }, [threadId, limit]);

  const mutate = useCallback(
    (mutateId?: string) => {
      const id = mutateId ?? current.current.threadId;
      if (!id) return Promise.resolve(undefined);
      const read = queue.current.then(async () => {
        const known = current.current.threadId === id && current.current.complete ? current.current.data : undefined;
        try {
          const data = await readNewer(
            ({ limit: size, before }) =>
              clientRef.current.threads.getHistory<S>(id, { limit: size, before: before === undefined ? undefined : { configurable: { checkpoint_id: before } } }),
            known,
            limit,
          );
          update(id, (was) => ({ ...was, data, error: undefined, isLoading: false, complete: true }));
          return data;
        } catch (error) {
          update(id, (was) => ({ ...was, error, isLoading: false }));
          return current.current.threadId === id ? current.current.data : undefined;
        }
      });
      queue.current = read;
      return read;
    },
    [limit],
  );

  const shown = loaded.threadId === threadId ? loaded : { threadId, data: undefined, error: undefined, isLoading: threadId !== null && !skipOpen(threadId), complete: false };
  return useMemo(
    () => ({ data: shown.data, error: shown.error, isLoading: shown.isLoading, complete: shown.complete, mutate }),
    [shown.data, shown.error, shown.isLoading, shown.complete, mutate],
  );
}
