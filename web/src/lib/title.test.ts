import { describe, expect, it } from "vitest";
import { autoTitle, exportTitle, isTitleOf, UNTITLED } from "./title";

describe("titles", () => {
  it("titles a conversation as orecast chat does: one line, 80 characters", () => {
    expect(autoTitle("  铁矿石\n现在  多少钱？ ")).toBe("铁矿石 现在 多少钱？");
    const long = "x".repeat(100);
    expect(autoTitle(long)).toBe(`${"x".repeat(79)}…`);
    expect(autoTitle(long)).toHaveLength(80);
  });

  it("knows a title its question gave from one the user chose", () => {
    expect(isTitleOf("铁矿石 现在多少钱？", "铁矿石\n现在多少钱？")).toBe(true);
    expect(isTitleOf("y".repeat(80), "y".repeat(120))).toBe(true); // cut by an earlier page
    expect(isTitleOf("My ore notes", "铁矿石现在多少钱？")).toBe(false);
  });

  it("titles an export by its title, else its first question on one line, else in both languages", () => {
    expect(exportTitle(" 晨报 ", "q")).toBe("晨报");
    expect(exportTitle("", "\n\n铁矿石\n走势")).toBe("铁矿石 走势");
    expect(exportTitle("  ", null)).toBe("未命名对话 / Untitled conversation");
    expect(exportTitle("", " \n ")).toBe(UNTITLED);
  });
});
