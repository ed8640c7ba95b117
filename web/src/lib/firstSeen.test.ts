import { describe, expect, it } from "vitest";
import { findLast } from "@langchain/langgraph-sdk/ui";
import { firstSeenStates } from "./firstSeen";

type Msg = { id?: string; type: string };
type State = { checkpoint: { checkpoint_id: string }; parent_checkpoint: { checkpoint_id: string } | null; values: { messages: Msg[] } };

const messagesOf = (values: { messages?: Msg[] }) => values.messages ?? [];
const state = (id: string, parent: string | null, ids: string[]): State => ({
  checkpoint: { checkpoint_id: id },
  parent_checkpoint: parent ? { checkpoint_id: parent } : null,
  values: { messages: ids.map((m) => ({ id: m, type: m.startsWith("h") ? "human" : "ai" })) },
});

// c0 → c1 [h1] → c2 [h1 a1] → c3 [h1 a1 h2] → c4 [h1 a1 h2 a2], and an edit of h2 forked from c2:
// c2 → c5 [h1 a1 h3] → c6 [h1 a1 h3 a3]. Newest first, as the server lists a history.
const tree: State[] = [
  state("c6", "c5", ["h1", "a1", "h3", "a3"]),
  state("c5", "c2", ["h1", "a1", "h3"]),
  state("c4", "c3", ["h1", "a1", "h2", "a2"]),
  state("c3", "c2", ["h1", "a1", "h2"]),
  state("c2", "c1", ["h1", "a1"]),
  state("c1", "c0", ["h1"]),
  state("c0", null, []),
];

/** How @langchain/langgraph-sdk 1.15's useStream finds it (per message, over every checkpoint). */
const sdkScan = (history: State[], id: string | number) =>
  findLast(history, (s) => s.values != null && messagesOf(s.values).map((m, i) => m.id ?? i).includes(id));

describe("firstSeenStates", () => {
  it("finds each message's first checkpoint as the SDK's scan does, on every branch", () => {
    const found = firstSeenStates(tree, messagesOf);
    for (const id of ["h1", "a1", "h2", "a2", "h3", "a3"]) expect(found.get(id)).toBe(sdkScan(tree, id));
    expect(found.get("h3")?.checkpoint.checkpoint_id).toBe("c5");
    expect(found.get("h1")?.checkpoint.checkpoint_id).toBe("c1");
  });

  it("keys a message without an id by its index, as the SDK does", () => {
    const history = [state("b", "a", ["h1"]), state("a", null, [])];
    history[0].values.messages.push({ type: "ai" });
    expect(firstSeenStates(history, messagesOf).get(1)).toBe(sdkScan(history, 1));
  });

  it("gives no checkpoint to the messages older than a history cut at the page's limit", () => {
    const cut = tree.slice(2, 5); // c4, c3, c2: c2's parent was not read
    const found = firstSeenStates(cut, messagesOf);
    // The SDK's scan says c2 for them: an edit of h1 forked from c2, which already holds h1.
    expect(sdkScan(cut, "h1")?.checkpoint.checkpoint_id).toBe("c2");
    expect(found.get("h1")).toBeUndefined();
    expect(found.get("a1")).toBeUndefined();
    expect(found.get("h2")?.checkpoint.checkpoint_id).toBe("c3");
  });

  it("scans a history read once", () => {
    let scans = 0;
    const counting = (values: { messages?: Msg[] }) => {
      scans += 1;
      return messagesOf(values);
    };
    const read = [...tree];
    const first = firstSeenStates(read, counting);
    expect(firstSeenStates(read, counting)).toBe(first);
    expect(scans).toBe(tree.length);
    firstSeenStates([...read], counting);
    expect(scans).toBe(2 * tree.length);
  });
});
