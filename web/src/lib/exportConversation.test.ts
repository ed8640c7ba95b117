import { describe, expect, it } from "vitest";
import { exportName, toJson, toMarkdown } from "./exportConversation";

const messages = [
  { type: "human", content: "铁矿石预测" },
  { type: "ai", content: "", tool_calls: [{ name: "forecast_price", args: { horizon: 6 } }] },
  { type: "tool", name: "forecast_price", content: '{"method":"theta"}' },
  { type: "ai", content: [{ type: "text", text: "| 月 | 价 |\n|---|---|\n| 6 | 106 |" }] },
];
const when = new Date("2026-11-30T08:00:00Z");

describe("conversation export", () => {
  it("writes questions as headings, tool calls, results and answers in order", () => {
    const md = toMarkdown("晨报", "t-1", messages, when);
    expect(md.startsWith("# 晨报\n")).toBe(true);
    const order = ["## 铁矿石预测", "`forecast_price` `{\"horizon\":6}`", '{"method":"theta"}', "| 6 | 106 |"].map((s) => md.indexOf(s));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("keeps every message in the JSON", () => {
    const parsed = JSON.parse(toJson("晨报", "t-1", messages, when));
    expect(parsed).toMatchObject({ title: "晨报", thread_id: "t-1", exported_at: "2026-11-30T08:00:00.000Z" });
    expect(parsed.messages).toEqual(messages);
  });

  it("names files from any script and never returns an empty stem", () => {
    expect(exportName("铁矿石 / Morning note", "md")).toBe("铁矿石-Morning-note.md");
    expect(exportName("///", "json")).toBe("conversation.json");
  });
});

describe("markdown tables", () => {
  it("ends a table before a sentence written right under it", async () => {
    const { closeTables } = await import("./markdown");
    expect(closeTables("| a | b |\n|---|---|\n| 1 | 2 |\nLowest: a\nnext")).toBe("| a | b |\n|---|---|\n| 1 | 2 |\n\nLowest: a\nnext");
    expect(closeTables("| a |\n|---|\n| 1 |\n\ntext")).toBe("| a |\n|---|\n| 1 |\n\ntext");
  });
});
