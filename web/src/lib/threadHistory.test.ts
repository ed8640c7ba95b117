import { describe, expect, it } from "vitest";
import { lastRunSize, mergeNewest, readNewer, type HistoryState } from "./threadHistory";

type State = HistoryState & { tag?: string };

/** A thread's checkpoints as the server keeps them: ids that grow with time, read newest first. */
class Thread {
  states: State[] = [];
  reads: { limit: number; before?: string; got: number }[] = [];
  private next = 0;

  /** `count` checkpoints of one run, from `parent` (the newest when not given), the first its input. */
  run(count: number, parent?: string): string {
    let at = parent ?? this.states.at(-1)?.checkpoint.checkpoint_id ?? null;
    for (let i = 0; i < count; i++) {
      const id = `c${String(this.next++).padStart(4, "0")}`;
      this.states.push({
        checkpoint: { checkpoint_id: id },
        parent_checkpoint: at ? { checkpoint_id: at } : null,
        metadata: { source: i === 0 ? "input" : "loop" },
      });
      at = id;
    }
    return at as string;
  }

  read = async ({ limit, before }: { limit: number; before?: string }): Promise<State[]> => {
    const newestFirst = [...this.states].reverse().filter((s) => before === undefined || (s.checkpoint.checkpoint_id ?? "") < before);
    const got = newestFirst.slice(0, limit).map((s) => ({ ...s }));
    this.reads.push({ limit, before, got: got.length });
    return got;
  };
}

const ids = (states: State[]) => states.map((s) => s.checkpoint.checkpoint_id);

describe("readNewer", () => {
  it("reads the whole history when nothing is known", async () => {
    const thread = new Thread();
    thread.run(8);
    thread.run(8);
    expect(ids(await readNewer(thread.read, undefined, 500))).toEqual(ids(await thread.read({ limit: 500 })));
  });

  it("reads about the last run's checkpoints after a run, and gives what a whole read gives", async () => {
    const thread = new Thread();
    for (let i = 0; i < 60; i++) thread.run(8);
    const known = await thread.read({ limit: 500 });
    thread.run(8);
    thread.reads = [];
    const after = await readNewer(thread.read, known, 500);
    // One read of 10: the 8 new checkpoints, the known head and its parent.
    expect(thread.reads).toEqual([{ limit: 10, before: undefined, got: 10 }]);
    expect(ids(after)).toEqual(ids(await thread.read({ limit: 500 })));
  });

  it("pages on (limit and before) when a run wrote more than the last one", async () => {
    const thread = new Thread();
    thread.run(3);
    thread.run(3);
    const known = await thread.read({ limit: 500 });
    thread.run(40);
    thread.reads = [];
    const after = await readNewer(thread.read, known, 500);
    expect(ids(after)).toEqual(ids(await thread.read({ limit: 500 })));
    expect(thread.reads.slice(0, -1).map((r) => r.limit)).toEqual([5, 10, 20, 40]);
    expect(thread.reads[1].before).toBe(ids(after)[4]);
  });

  it("keeps the branches: a run forked from an old checkpoint comes first, the old branch after", async () => {
    const thread = new Thread();
    const first = thread.run(4);
    thread.run(4);
    const known = await thread.read({ limit: 500 });
    thread.run(4, first); // an edit of the second question
    const after = await readNewer(thread.read, known, 500);
    expect(ids(after)).toEqual(ids(await thread.read({ limit: 500 })));
    expect(after[3].parent_checkpoint?.checkpoint_id).toBe(first);
  });

  it("keeps the newest `limit`, as a whole read of that size", async () => {
    const thread = new Thread();
    for (let i = 0; i < 10; i++) thread.run(5);
    const known = await thread.read({ limit: 30 });
    thread.run(5);
    expect(ids(await readNewer(thread.read, known, 30))).toEqual(ids(await thread.read({ limit: 30 })));
  });

  it("takes the known head again from the server (a resumed head's tasks change)", async () => {
    const thread = new Thread();
    thread.run(5);
    const known = (await thread.read({ limit: 500 })).map((s) => ({ ...s, tag: "old" }));
    thread.run(2);
    const after = await readNewer(thread.read, known, 500);
    expect(after[2].checkpoint.checkpoint_id).toBe(known[0].checkpoint.checkpoint_id);
    expect(after[2].tag).toBeUndefined();
  });
});

describe("lastRunSize and mergeNewest", () => {
  it("counts the newest run down to its input", async () => {
    const thread = new Thread();
    thread.run(6);
    thread.run(9);
    expect(lastRunSize(await thread.read({ limit: 500 }))).toBe(9);
  });

  it("has no size for a history without a run's input (written with update_state)", () => {
    const updates: State[] = [2, 1].map((i) => ({ checkpoint: { checkpoint_id: `c${i}` }, parent_checkpoint: { checkpoint_id: `c${i - 1}` }, metadata: { source: "update" } }));
    expect(lastRunSize(updates)).toBeNull();
  });

  it("keeps what is known when nothing came back", () => {
    const known: State[] = [{ checkpoint: { checkpoint_id: "c2" } }, { checkpoint: { checkpoint_id: "c1" } }];
    expect(mergeNewest([], known, 1)).toEqual([known[0]]);
  });
});
