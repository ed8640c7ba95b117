import { describe, expect, it } from "vitest";
import { nextDelay, REFRESH_MAX_MS, REFRESH_MIN_MS } from "./refreshCycle";

describe("refresh cycle", () => {
  it("waits twice as long after each look that found nothing, up to the longest", () => {
    const waits: number[] = [];
    let wait = REFRESH_MIN_MS;
    for (let i = 0; i < 5; i++) waits.push((wait = nextDelay(wait, false)));
    expect(waits).toEqual([4000, 8000, 16000, 16000, 16000]);
    expect(REFRESH_MAX_MS).toBe(16000);
    expect(nextDelay(REFRESH_MAX_MS, true)).toBe(REFRESH_MIN_MS);
  });
});
