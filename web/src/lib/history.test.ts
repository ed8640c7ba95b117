import { describe, expect, it } from "vitest";
import { textOf } from "../api";
import { browserLang, DICTS } from "../i18n";
import { indexById, messageLine, writerLabel, writerOf } from "./history";
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

describe("history words in the page's language", () => {
  const zh = (k: keyof typeof DICTS.zh) => DICTS.zh[k];
  const en = (k: keyof typeof DICTS.en) => DICTS.en[k];
  const asked = [{ type: "human", content: "铁矿石最近一年波动率" }];

  it("names a turn's first step by its question, the model and tools in words, and mutes the rest", () => {
    expect(writerLabel("__start__", asked, zh, textOf)).toEqual({ label: "提问：铁矿石最近一年波动率", internal: false });
    expect(writerLabel("model", asked, zh, textOf)).toEqual({ label: "模型", internal: false });
    expect(writerLabel("tools", asked, en, textOf)).toEqual({ label: "tools", internal: false });
    expect(writerLabel("__start__", [{ type: "human", content: "Rebar now" }], en, textOf).label).toBe("Question: Rebar now");
    expect(writerLabel("HumanInTheLoopMiddleware.after_model", asked, zh, textOf)).toEqual({ label: "HumanInTheLoopMiddleware.after_model", internal: true });
  });

  it("says who wrote each message, and what an answer that only calls tools calls", () => {
    // Was "human …", "ai …" (nothing to read for a tool call) and "tool …" in a Chinese page.
    expect(messageLine(asked[0], zh, textOf)).toEqual({ who: "提问", what: "铁矿石最近一年波动率" });
    const call = { type: "ai", content: "", tool_calls: [{ name: "describe_series" }, { name: "latest_price" }] };
    expect(messageLine(call, zh, textOf)).toEqual({ who: "分析师", what: "调用 describe_series, latest_price" });
    expect(messageLine({ type: "tool", content: "{}", name: "describe_series" }, en, textOf)).toEqual({ who: "Tool result", what: "describe_series: {}" });
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
