import { describe, expect, it } from "vitest";
import { descriptionIn, pendingApproval } from "./approval";
import { reportPath } from "./tools";

describe("approval interrupts", () => {
  it("answers a batched HITL request with one decision per action, by position", () => {
    const pending = pendingApproval([{
      id: "i1",
      value: {
        action_requests: [{ name: "export_report", args: { title: "T" }, description: "needs approval" }],
        review_configs: [{ action_name: "export_report", allowed_decisions: ["approve", "edit", "reject"] }],
      },
    }]);
    expect(pending?.actions).toEqual([{ name: "export_report", args: { title: "T" }, description: "needs approval", allowed: ["approve", "edit", "reject"] }]);
    expect(pending?.resume([{ type: "reject", message: "no" }])).toEqual({ decisions: [{ type: "reject", message: "no" }] });
  });

  it("answers per-call approvals with a decision keyed by interrupt id", () => {
    const pending = pendingApproval([
      { id: "a", value: { type: "tool_approval", tool_call_id: "c1", name: "export_report", args: {}, description: "" } },
      { id: "b", value: { type: "tool_approval", tool_call_id: "c2", name: "export_report", args: {}, description: "" } },
    ]);
    expect(pending?.resume([{ type: "approve" }, { type: "reject" }])).toEqual({ a: { type: "approve" }, b: { type: "reject" } });
  });

  it("ignores other interrupts", () => {
    expect(pendingApproval([{ id: "x", value: "what is your name?" }])).toBeNull();
    expect(pendingApproval([])).toBeNull();
  });
});

describe("report path", () => {
  it("reads a plain result and an edited one (notice quoting the args, then the JSON)", () => {
    expect(reportPath('{"report": "data/reports/a.md", "title": "A"}')).toBe("data/reports/a.md");
    const edited = 'Note: replaced. Executed instead: export_report with arguments {"title": "B"}.\n\nTool response:\n{"report": "data/reports/b.md"}';
    expect(reportPath(edited)).toBe("data/reports/b.md");
    expect(reportPath("Error: rejected")).toBeNull();
  });
});

describe("an action's description", () => {
  it("is shown in the page's language when written in both", () => {
    const both = "导出报告需要批准 / Exporting a report needs approval";
    expect(descriptionIn(both, "zh")).toBe("导出报告需要批准");
    expect(descriptionIn(both, "en")).toBe("Exporting a report needs approval");
    expect(descriptionIn("Exporting a report needs approval / 导出报告需要批准", "zh")).toBe("导出报告需要批准");
  });

  it("is left alone otherwise", () => {
    expect(descriptionIn("Tool execution requires approval", "zh")).toBe("Tool execution requires approval");
    expect(descriptionIn("input / output files", "zh")).toBe("input / output files");
    expect(descriptionIn("输入 / 输出", "en")).toBe("输入 / 输出");
  });
});
