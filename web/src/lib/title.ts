/**
 * A conversation's title is its thread's metadata `title`, which the API, `orecast threads` and the
 * page's list all show. A new conversation is titled by its first question, as `orecast chat` titles
 * one (cli/runs.py `title_of`): on one line, cut to 80 characters with "…". Until the user renames
 * it, it follows that question: an edit of the first question retitles the thread.
 */
const TITLE_CHARS = 80;

export function autoTitle(question: string): string {
  const text = question.split(/\s+/).filter(Boolean).join(" ");
  return text.length <= TITLE_CHARS ? text : `${text.slice(0, TITLE_CHARS - 1)}…`;
}

/** Whether `title` is the one `question` gave (now, or as earlier pages cut it: its first 80 characters). */
export function isTitleOf(title: string, question: string): boolean {
  return title === autoTitle(question) || title === question.slice(0, TITLE_CHARS).trim();
}

/** What a conversation without a title and without a question is called where a title is needed. */
export const UNTITLED = "未命名对话 / Untitled conversation";

/**
 * The title of an exported conversation (the Markdown's heading, the JSON's `title`, the file name):
 * its own, else the one its first question gives (one line: a question that starts with a blank
 * line gave an empty heading), else `UNTITLED`, in both languages, as the document may be read by
 * someone whose page speaks the other.
 */
export function exportTitle(title: string, firstQuestion: string | null): string {
  return title.trim() || autoTitle(firstQuestion ?? "") || UNTITLED;
}
