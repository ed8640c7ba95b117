/**
 * A thread's history in orecast's shared form (`POST /threads/{id}/history/shared`, the service's
 * `encode.History(shared=True)`): `{messages, states}`, each message once in `messages` and, wherever
 * it is in a state, `{"__orecast_shared_message__": its index}`. Every checkpoint holds the whole
 * conversation, so a long one's 500 checkpoints were 153 MB of JSON as `threads.getHistory` answers
 * them (4–5 s of `JSON.parse` alone); shared they are 3.5 MB.
 */
export const SHARED_MESSAGE = "__orecast_shared_message__";

export interface SharedHistory {
  messages: unknown[];
  states: unknown[];
}

/** The states, each stand-in replaced by its message: the history `threads.getHistory` gives. A
 * message is one object for all the states that hold it (nothing here or in the SDK changes one). */
export function expandShared<T>(answer: SharedHistory): T[] {
  const { messages } = answer;
  const put = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = put(value[i]);
      return value;
    }
    if (value !== null && typeof value === "object") {
      const fields = value as Record<string, unknown>;
      const at = fields[SHARED_MESSAGE];
      if (typeof at === "number" && Object.keys(fields).length === 1) {
        if (!(at >= 0 && at < messages.length)) throw new Error(`the history names message ${at} of ${messages.length}`);
        return messages[at];
      }
      for (const key of Object.keys(fields)) fields[key] = put(fields[key]);
    }
    return value;
  };
  return answer.states.map((state) => put(state) as T);
}
