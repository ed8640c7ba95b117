import { describe, expect, it } from "vitest";
import { expandShared, SHARED_MESSAGE } from "./sharedHistory";

const ref = (i: number) => ({ [SHARED_MESSAGE]: i });

describe("expandShared", () => {
  it("puts each message back wherever a state holds it, one object for all", () => {
    const q = { type: "human", content: "price?", id: "q1" };
    const a = { type: "ai", content: "707", id: "a1", tool_calls: [] };
    const states = expandShared<{ values: { messages: unknown[] }; tasks: unknown[] }>({
      messages: [q, a],
      states: [
        { values: { messages: [ref(0), ref(1)] }, tasks: [{ state: { values: { messages: [ref(0)] } } }] },
        { values: { messages: [ref(0)] }, tasks: [] },
      ],
    });
    expect(states).toEqual([
      { values: { messages: [q, a] }, tasks: [{ state: { values: { messages: [q] } } }] },
      { values: { messages: [q] }, tasks: [] },
    ]);
    expect(states[0].values.messages[0]).toBe(states[1].values.messages[0]);
  });

  it("leaves alone what only looks like a stand-in", () => {
    const value = { [SHARED_MESSAGE]: 0, other: 1 };
    const [state] = expandShared<{ values: unknown }>({ messages: [{ id: "m" }], states: [{ values: { a: value, b: { [SHARED_MESSAGE]: "0" } } }] });
    expect(state.values).toEqual({ a: { [SHARED_MESSAGE]: 0, other: 1 }, b: { [SHARED_MESSAGE]: "0" } });
  });

  it("refuses a stand-in for a message the answer does not hold", () => {
    expect(() => expandShared({ messages: [], states: [{ values: { messages: [ref(0)] } }] })).toThrow(/message 0 of 0/);
  });
});
