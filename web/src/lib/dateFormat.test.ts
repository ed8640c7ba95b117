import { describe, expect, it } from "vitest";
import { formatDate } from "./dateFormat";

describe("formatDate", () => {
  const at = new Date(2026, 11, 7, 14, 3, 7);

  it("writes what toLocale…String wrote, in both languages", () => {
    for (const locale of ["zh-CN", "en-US"]) {
      expect(formatDate(at, locale, "time")).toBe(at.toLocaleTimeString(locale, { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
      expect(formatDate(at, locale, "dayTime")).toBe(at.toLocaleString(locale, { month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }));
      expect(formatDate(at, locale, "date")).toBe(at.toLocaleDateString(locale));
      expect(formatDate(at, locale, "hourMinute")).toBe(at.toLocaleTimeString(locale, { hour: "2-digit", minute: "2-digit" }));
    }
  });
});
