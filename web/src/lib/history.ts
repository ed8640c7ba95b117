/** Checkpoint rows for the history panel: which node wrote each checkpoint. */

export interface StateLike {
  checkpoint: { checkpoint_id?: string | null };
  parent_checkpoint?: { checkpoint_id?: string | null } | null;
  metadata?: Record<string, unknown> | null;
  tasks?: { name: string }[];
  next?: string[];
  created_at?: string | null;
}

/**
 * The node(s) whose writes made `state`: the tasks its parent checkpoint had scheduled. A
 * checkpoint without a parent is the thread's input ("input"); without the parent in the list
 * (older than the page loaded), the checkpoint's `source` is the best we know.
 */
export function writerOf(state: StateLike, byId: Map<string, StateLike>): string {
  const parentId = state.parent_checkpoint?.checkpoint_id;
  if (!parentId) return String(state.metadata?.source ?? "input");
  const parent = byId.get(parentId);
  const names = parent?.tasks?.map((task) => task.name) ?? [];
  return names.length > 0 ? [...new Set(names)].join(", ") : String(state.metadata?.source ?? "");
}

export function indexById<S extends StateLike>(states: S[]): Map<string, S> {
  return new Map(states.filter((s) => s.checkpoint.checkpoint_id).map((s) => [s.checkpoint.checkpoint_id as string, s]));
}

type Translate = (key: "askedStep" | "roleHuman" | "roleAi" | "roleTool" | "callsTools" | "nodeModel" | "nodeTools" | "nodeInput") => string;

export interface MessageLikeForHistory {
  type: string;
  content: unknown;
  name?: string | null;
  tool_calls?: { name: string }[];
}

/**
 * How a row names its writer for an analyst. A turn's first step (`__start__`) is named by the
 * question it took in; the model, the tools and the input in the page's language; the steps of
 * LangGraph and of the agent's middleware keep their code names and are shown muted (`internal`).
 */
export function writerLabel(
  writer: string,
  messages: readonly MessageLikeForHistory[],
  t: Translate,
  text: (content: unknown) => string,
): { label: string; internal: boolean } {
  const last = messages[messages.length - 1];
  if (writer === "__start__" && last?.type === "human") return { label: t("askedStep").replace("{q}", text(last.content)), internal: false };
  const named = { model: t("nodeModel"), tools: t("nodeTools"), input: t("nodeInput") }[writer];
  return named ? { label: named, internal: false } : { label: writer, internal: true };
}

/** A message of the selected checkpoint: who, in the page's language, and what (an AI message that
 * only calls tools says which). */
export function messageLine(m: MessageLikeForHistory, t: Translate, text: (content: unknown) => string): { who: string; what: string } {
  const said = text(m.content);
  if (m.type === "human") return { who: t("roleHuman"), what: said };
  if (m.type === "ai") {
    const calls = (m.tool_calls ?? []).map((call) => call.name);
    return { who: t("roleAi"), what: said || (calls.length ? `${t("callsTools")} ${calls.join(", ")}` : "") };
  }
  if (m.type === "tool") return { who: t("roleTool"), what: m.name ? `${m.name}: ${said}` : said };
  return { who: m.type, what: said };
}
