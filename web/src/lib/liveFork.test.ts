import { describe, expect, it } from "vitest";
import { forkSwitch, forkView, LIVE_BRANCH, startFork } from "./liveFork";

describe("startFork", () => {
  it("makes an only message the first of two, the new one last", () => {
    const fork = startFork(2, undefined, "");
    expect(fork).toEqual({ at: 2, options: ["", LIVE_BRANCH] });
    expect(forkSwitch(fork, null, 2)).toEqual({ branch: LIVE_BRANCH, branchOptions: ["", LIVE_BRANCH] });
  });

  it("keeps the siblings a message already had, and adds the new one after them", () => {
    const fork = startFork(0, { branch: "b", branchOptions: ["a", "b"] }, "b");
    expect(fork.options).toEqual(["a", "b", LIVE_BRANCH]);
  });

  it("names the branch of a message without siblings (an older fork's branch) as the one shown", () => {
    expect(startFork(4, { branch: undefined, branchOptions: undefined }, "x>y").options).toEqual(["x>y", LIVE_BRANCH]);
  });
});

describe("forkSwitch and forkView", () => {
  const fork = startFork(2, { branch: "b", branchOptions: ["a", "b"] }, "b");
  const live = ["q1", "a1", "q2 edited", "streaming"];
  const older = ["q1", "a1", "q2", "a2"];

  it("is only on the replaced message's place", () => {
    expect(forkSwitch(fork, null, 0)).toBeUndefined();
    expect(forkSwitch(null, null, 2)).toBeUndefined();
  });

  it("shows the run's messages on the live branch, and an older sibling's when it is chosen", () => {
    expect(forkView(fork, null, live, older)).toBe(live);
    expect(forkSwitch(fork, "a", 2)).toEqual({ branch: "a", branchOptions: ["a", "b", LIVE_BRANCH] });
    expect(forkView(fork, "a", live, older)).toBe(older);
    expect(forkView(fork, "", live, undefined)).toEqual([]);
  });

  it("is the stream itself without a fork", () => {
    expect(forkView(null, "a", live, older)).toBe(live);
  });
});
