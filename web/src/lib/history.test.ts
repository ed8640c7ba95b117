import { describe, expect, it } from "vitest";
import { browserLang } from "../i18n";
import { indexById, writerOf } from "./history";
import { groupTurns } from "./turns";

describe("history rows", () => {
  it("names the node that wrote a checkpoint from its parent's tasks", () => {
    const states = [
      { checkpoint: { checkpoint_id: "c3" }, parent_checkpoint: { checkpoint_id: "c2" }, metadata: { source: "loop" }, tasks: [] },
      { checkpoint: { checkpoint_id: "c2" }, parent_checkpoint: { checkpoint_id: "c1" }, metadata: { source: "loop" }, tasks: [{ name: "tools" }, { name: "tools" }] },
      { checkpoint: { checkpoint_id: "c1" }, parent_checkpoint: null, metadata: { source: "input" }, tasks: [{ name: "model" }] },
    ];
    const byId = indexById(states);
    expect(states.map((s) => writerOf(s, byId))).toEqual(["tools", "model", "input"]);
    expect(writerOf({ checkpoint: { checkpoint_id: "x" }, parent_checkpoint: { checkpoint_id: "gone" }, metadata: { source: "fork" } }, byId)).toBe("fork");
  });
});

describe("turns", () => {
  it("groups AI and tool messages after each question", () => {
    const turns = groupTurns([
      { type: "human", content: "q1" },
      { type: "ai", content: "", tool_calls: [{ id: "1", name: "t", args: {} }] },
      { type: "tool", content: "r", tool_call_id: "1" },
      { type: "ai", content: "a1" },
      { type: "human", content: "q2" },
    ]);
    expect(turns.map((t) => t.kind)).toEqual(["human", "assistant", "human"]);
    const assistant = turns[1];
    expect(assistant.kind === "assistant" && [assistant.messages.length, assistant.results.length]).toEqual([2, 1]);
  });
});

describe("UI language", () => {
  it("follows the first of Chinese or English the browser prefers, Chinese otherwise", () => {
    expect(browserLang(["en-GB", "zh-CN"])).toBe("en");
    expect(browserLang(["de-DE", "zh-TW"])).toBe("zh");
    expect(browserLang(["fr-FR"])).toBe("zh");
  });
});
