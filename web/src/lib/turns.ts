/** The message list grouped for display: each question, then the assistant's turn after it. */
import type { ToolCallLike, ToolResultLike } from "./tools";

export interface MessageLike {
  type: string;
  id?: string;
  content: unknown;
  tool_calls?: ToolCallLike[];
  tool_call_id?: string;
  [key: string]: unknown;
}

export type Turn =
  | { kind: "human"; message: MessageLike; index: number }
  | { kind: "assistant"; messages: MessageLike[]; results: ToolResultLike[]; index: number };

export function groupTurns(messages: MessageLike[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((m, index) => {
    if (m.type === "human") {
      turns.push({ kind: "human", message: m, index });
      return;
    }
    if (m.type !== "ai" && m.type !== "tool") return;
    let last = turns[turns.length - 1];
    if (!last || last.kind !== "assistant") {
      last = { kind: "assistant", messages: [], results: [], index };
      turns.push(last);
    }
    if (m.type === "ai") last.messages.push(m);
    else last.results.push(m as unknown as ToolResultLike);
  });
  return turns;
}
