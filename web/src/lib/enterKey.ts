import type { KeyboardEvent } from "react";

/** Whether a key press in a question box (the composer, a question being edited) asks to send it:
 * Enter, but not Shift+Enter (a new line) nor an Enter that ends an IME composition. The box decides
 * whether it may send now (not while an answer streams: it keeps its text, as the composer does). */
export function asksToSend(e: KeyboardEvent<HTMLTextAreaElement>): boolean {
  return e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing;
}
