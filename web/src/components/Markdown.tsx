import { useMemo } from "react";
import { renderMarkdown } from "../lib/markdown";

/** Sanitised Markdown (see lib/markdown.ts); the only place model text becomes HTML. */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div className="md" dangerouslySetInnerHTML={{ __html: html }} />;
}
