import { useEffect, useState } from "react";
import { useI18n } from "../i18n";
import { asksToSend } from "../lib/enterKey";
import { useNarrow } from "../lib/narrow";
import { Icon } from "./Icon";

interface Props {
  busy: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
  /** Text to put back in the box (a question the server refused); a new object each time. */
  restore?: { text: string } | null;
}

/** The question box: Enter sends, Shift+Enter adds a line (IME composition is left alone). */
export function Composer({ busy, onSend, onStop, restore }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState("");
  // A phone's keyboard has no Shift+Enter, and the hint about it did not fit the box.
  const narrow = useNarrow();
  useEffect(() => {
    if (restore) setText(restore.text);
  }, [restore]);
  const send = () => {
    const q = text.trim();
    if (!q || busy) return;
    onSend(q);
    setText("");
  };
  return (
    <form
      className="composer"
      data-testid="composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <textarea
        aria-label={t("composerLabel")}
        placeholder={t(narrow ? "composerPlaceholderShort" : "composerPlaceholder")}
        data-testid="composer-input"
        value={text}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (asksToSend(e)) {
            e.preventDefault();
            send();
          }
        }}
      />
      {busy ? (
        <button type="button" className="btn danger" onClick={onStop} data-testid="stop-button">
          <Icon name="stop" size={14} /> {t("stop")}
        </button>
      ) : (
        <button type="submit" className="btn primary" disabled={!text.trim()} data-testid="send-button">
          {t("send")}
        </button>
      )}
    </form>
  );
}
