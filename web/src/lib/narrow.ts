import { useSyncExternalStore } from "react";

/** The phone layout of styles.css: the sidebar and the history panel cover the conversation. */
const PHONE = "(max-width: 760px)";

function subscribe(onChange: () => void): () => void {
  const query = window.matchMedia(PHONE);
  query.addEventListener("change", onChange);
  return () => query.removeEventListener("change", onChange);
}

export function useNarrow(): boolean {
  return useSyncExternalStore(subscribe, () => window.matchMedia(PHONE).matches);
}
