import { describe, expect, it } from "vitest";
import { newestBranch, type TreeSequence } from "./branches";

const node = (id: string, at: string, path: string[] = []) =>
  ({ type: "node" as const, value: { checkpoint: { checkpoint_id: id }, created_at: at }, path });

describe("newestBranch", () => {
  it("is empty without checkpoints", () => {
    expect(newestBranch(null)).toBeNull();
    expect(newestBranch({ type: "sequence", items: [] })).toBeNull();
  });

  it("is the unforked thread's head", () => {
    const tree: TreeSequence = { type: "sequence", items: [node("a", "1"), node("b", "2")] };
    expect(newestBranch(tree)).toEqual({ checkpointId: "b", branch: "" });
  });

  it("follows the newest checkpoint into an older child of a fork, through a nested fork", () => {
    // a → fork: [c (older child, then continued: e → fork [f, g]), d (newer child)]
    const tree: TreeSequence = {
      type: "sequence",
      items: [
        node("a", "1"),
        {
          type: "fork",
          items: [
            { type: "sequence", items: [node("c", "2", ["c"]), node("e", "5", ["c"]), {
              type: "fork",
              items: [
                { type: "sequence", items: [node("f", "6", ["c", "f"])] },
                { type: "sequence", items: [node("g", "7", ["c", "g"])] },
              ],
            }] },
            { type: "sequence", items: [node("d", "3", ["d"])] },
          ],
        },
      ],
    };
    expect(newestBranch(tree)).toEqual({ checkpointId: "g", branch: "c>g" });
  });
});
