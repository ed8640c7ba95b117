import { describe, expect, it } from "vitest";
import { probeOutcome, REJOIN_MAX_MS, rejoinDelay } from "./rejoin";

describe("rejoinDelay", () => {
  it("starts under a second and backs off to 8 s, far under the list look's 16 s", () => {
    expect([0, 1, 2, 3, 4, 5, 30].map(rejoinDelay)).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(rejoinDelay(1000)).toBe(REJOIN_MAX_MS);
    expect(rejoinDelay(-1)).toBe(500);
  });
});

describe("probeOutcome", () => {
  it("joins once the server answers for the run", () => {
    expect(probeOutcome(200)).toBe("back");
  });

  it("looks again while no answer comes, or the server fails or is overloaded", () => {
    expect([null, 500, 502, 503, 504, 429, 408].map(probeOutcome)).toEqual(Array(7).fill("down"));
  });

  it("stops when the run is gone or may not be seen", () => {
    expect([404, 401, 403, 422].map(probeOutcome)).toEqual(Array(4).fill("gone"));
  });
});
