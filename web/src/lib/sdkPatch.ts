/**
 * A build-time patch of `@langchain/langgraph-sdk`'s React `useStream`: its per-message scan of the
 * whole checkpoint history (run on every render) becomes a lookup in `firstSeenStates` (see
 * firstSeen.ts for why). The SDK is pinned; if an upgrade changes that code, the build fails here,
 * so whoever upgrades looks at whether the scan is still there.
 */
import type { Plugin } from "vite";

const STREAM_MODULE = /@langchain[\\/]langgraph-sdk[\\/]dist[\\/]react[\\/]stream\.lgp\.js$/;
const SCAN =
  "findLast(history.data ?? [], (state) => state.values != null && getMessages(state.values).map((m, idx) => m.id ?? idx).includes(messageId))";
const LOOKUP = "__orecastFirstSeenStates(history.data ?? [], getMessages).get(messageId)";

/** `code` (the SDK's stream.lgp.js) with the scan replaced; `helper` is firstSeen.ts's path. */
export function patchStreamModule(code: string, helper: string): string {
  const parts = code.split(SCAN);
  if (parts.length !== 2) {
    throw new Error(
      "@langchain/langgraph-sdk's useStream no longer has the history scan web/src/lib/sdkPatch.ts replaces: " +
        "check whether the upgrade made it fast, then drop or update the patch",
    );
  }
  const load = `import { firstSeenStates as __orecastFirstSeenStates } from ${JSON.stringify(helper)};\n`;
  return load + parts.join(LOOKUP);
}

/** The patch as a Vite (and Rolldown, for the dev server's pre-bundling) plugin. */
export function sdkFirstSeenPatch(helper: string, mustApply: boolean): Plugin {
  let applied = false;
  return {
    name: "orecast-sdk-first-seen",
    transform(code, id) {
      if (!STREAM_MODULE.test(id.split("?")[0])) return null;
      applied = true;
      return { code: patchStreamModule(code, helper), map: null };
    },
    buildEnd() {
      if (mustApply && !applied) this.error("the page was built without the useStream patch (web/src/lib/sdkPatch.ts)");
    },
  };
}
