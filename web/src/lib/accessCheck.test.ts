import { describe, expect, it } from "vitest";
import { ACCESS_RETRY_MAX_MS, accessRetryDelay } from "./accessCheck";

describe("access check retries", () => {
  it("waits 1, 2, 4 … s after each failed check, up to 30 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map(accessRetryDelay)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(accessRetryDelay(1000)).toBe(ACCESS_RETRY_MAX_MS);
  });
});
