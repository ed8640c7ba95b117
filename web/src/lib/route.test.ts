import { describe, expect, it } from "vitest";
import { checkpointHash } from "./ops";
import { parseRoute } from "./route";

describe("the page's address", () => {
  it("names a thread, a thread at a checkpoint, or the operations view", () => {
    expect(parseRoute("#/thread/t-1")).toEqual({ ops: false, threadId: "t-1", checkpointId: null });
    expect(parseRoute("#/ops")).toEqual({ ops: true, threadId: null, checkpointId: null });
    expect(parseRoute("#/")).toEqual({ ops: false, threadId: null, checkpointId: null });
    expect(parseRoute("#/thread/../x")).toEqual({ ops: false, threadId: null, checkpointId: null });
  });
  it("reads back the link a failed call carries", () => {
    const cp = "1f0c2a3b-4d5e-6f70-8a9b-0c1d2e3f4a5b";
    expect(parseRoute(checkpointHash("t-1", cp))).toEqual({ ops: false, threadId: "t-1", checkpointId: cp });
  });
});
