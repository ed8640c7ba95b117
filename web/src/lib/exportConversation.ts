/** A conversation as a Markdown document or as JSON, for the "Export" menu. */
import { textOf } from "../api";

export interface ExportMessage {
  type?: string;
  content?: unknown;
  name?: string;
  tool_calls?: { name: string; args: Record<string, unknown> }[];
  [key: string]: unknown;
}

export function toMarkdown(title: string, threadId: string, messages: ExportMessage[], when: Date): string {
  const lines = [`# ${title}`, "", `*orecast · thread \`${threadId}\` · ${when.toISOString()}*`, ""];
  for (const m of messages) {
    const text = textOf(m.content).trim();
    if (m.type === "human") {
      lines.push(`## ${text.split("\n")[0]}`, "");
      if (text.includes("\n")) lines.push(text, "");
    } else if (m.type === "ai") {
      for (const call of m.tool_calls ?? []) lines.push(`> 🔧 \`${call.name}\` \`${JSON.stringify(call.args)}\``, "");
      if (text) lines.push(text, "");
    } else if (m.type === "tool") {
      lines.push("<details><summary>" + `${m.name ?? "tool"}` + "</summary>", "", "```json", text, "```", "", "</details>", "");
    }
  }
  return lines.join("\n");
}

export function toJson(title: string, threadId: string, messages: ExportMessage[], when: Date): string {
  return JSON.stringify({ title, thread_id: threadId, exported_at: when.toISOString(), messages }, null, 2);
}

/** A file name from a title: letters (any script), digits and dashes. */
export function exportName(title: string, ext: "md" | "json"): string {
  const stem = title.replace(/[^\p{L}\p{N}-]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "conversation";
  return `${stem}.${ext}`;
}
