import { describe, expect, it } from "vitest";
import type { Thread } from "@langchain/langgraph-sdk";
import { mayHaveOlder, withOlder } from "./olderThreads";

const thread = (id: string) => ({ thread_id: id }) as Thread;

describe("older conversations", () => {
  it("come after the newest, without those that moved up among them", () => {
    // c was read as older, then a question moved it to the top of the newest.
    const shown = withOlder([thread("c"), thread("a")], [thread("b"), thread("c"), thread("d")]);
    expect(shown.map((th) => th.thread_id)).toEqual(["c", "a", "b", "d"]);
  });

  it("may exist while every page read was full", () => {
    expect(mayHaveOlder(199, [], 200)).toBe(false);
    expect(mayHaveOlder(200, [], 200)).toBe(true);
    expect(mayHaveOlder(200, [200], 200)).toBe(true);
    expect(mayHaveOlder(200, [200, 12], 200)).toBe(false);
  });
});
