/**
 * The checkpoint where each message of a thread first appears, for the SDK's `getMessagesMetadata`
 * (`firstSeenState`: the checkpoint an edit or a regenerate forks from, and the message's branch).
 *
 * `@langchain/langgraph-sdk` 1.15 finds it per message by scanning every checkpoint's message list,
 * on every render of `useStream`: messages × checkpoints × messages. In a conversation of 55
 * questions (220 messages, the 500 checkpoints the page reads) that froze the page for ~15 s while
 * each answer streamed. Here one pass over a history read finds it for all messages; the SDK is
 * patched to call this (sdkPatch.ts).
 *
 * A history cut at the page's limit starts in the middle of the conversation: its oldest checkpoint
 * holds every message older than itself, so where those first appeared is not known, and they get
 * no checkpoint. (The SDK gave them that oldest one: an edit of an early question forked from the
 * middle of the conversation and added the edited question after the one it was meant to replace.)
 */

interface HistoryState {
  values?: unknown;
  parent_checkpoint?: unknown;
}
type MessageKey = string | number;
type MessagesOf = (values: never) => readonly { id?: string | null }[];

/** Per history read (the SDK keeps the array until it reads the history again). */
const seen = new WeakMap<readonly object[], Map<MessageKey, HistoryState>>();

/** Message id (or index, for one without an id, as the SDK keys it) → its first checkpoint. */
export function firstSeenStates<S extends HistoryState>(history: readonly S[], messagesOf: MessagesOf): Map<MessageKey, S> {
  let found = seen.get(history);
  if (!found) {
    found = scan(history, messagesOf);
    seen.set(history, found);
  }
  return found as Map<MessageKey, S>;
}

function scan(history: readonly HistoryState[], messagesOf: MessagesOf): Map<MessageKey, HistoryState> {
  const found = new Map<MessageKey, HistoryState>();
  let oldest: HistoryState | undefined;
  // The history is newest first: walk it from the thread's start.
  for (let i = history.length - 1; i >= 0; i--) {
    const state = history[i];
    if (state.values == null) continue;
    oldest ??= state;
    messagesOf(state.values as never).forEach((message, index) => {
      const key = message.id ?? index;
      if (!found.has(key)) found.set(key, state);
    });
  }
  const cut = history.length > 0 && history[history.length - 1].parent_checkpoint != null;
  if (cut) for (const [key, state] of found) if (state === oldest) found.delete(key);
  return found;
}
