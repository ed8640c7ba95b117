import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { patchStreamModule } from "./sdkPatch";

const require = createRequire(import.meta.url);
const sdk = dirname(require.resolve("@langchain/langgraph-sdk/package.json"));
const streamModule = readFileSync(join(sdk, "dist", "react", "stream.lgp.js"), "utf8");

describe("the useStream patch", () => {
  it("replaces the installed SDK's history scan with the lookup, once", () => {
    const patched = patchStreamModule(streamModule, "/web/src/lib/firstSeen.ts");
    expect(patched.startsWith('import { firstSeenStates as __orecastFirstSeenStates } from "/web/src/lib/firstSeen.ts";\n')).toBe(true);
    expect(patched).not.toContain(".includes(messageId)");
    expect(patched.split("__orecastFirstSeenStates(history.data ?? [], getMessages).get(messageId)")).toHaveLength(2);
  });

  it("fails the build when the SDK's code is not what it patches", () => {
    expect(() => patchStreamModule("export const useStream = () => null;", "/x.ts")).toThrow(/no longer has the history scan/);
  });
});
