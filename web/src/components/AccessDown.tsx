import { useEffect, useState } from "react";
import { describeError } from "../api";
import { useI18n } from "../i18n";

interface Props {
  error: unknown;
  retryAt: number | null;
  checking: boolean;
  onRetry: () => void;
}

/**
 * The access check failed: why (unreachable, database down, a server error), that it is being tried
 * again and when, and a button to try now. Only the reason is an alert: the countdown ticking every
 * second would be read out each time.
 */
export function AccessDown({ error, retryAt, checking, onRetry }: Props) {
  const { t } = useI18n();
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, []);
  const seconds = retryAt === null ? null : Math.max(0, Math.ceil((retryAt - now) / 1000));
  return (
    <div className="error-box" data-testid="access-down" data-checking={checking}>
      <span role="alert">{describeError(error, t)}</span>
      <span className="muted" aria-live="off" data-testid="access-retry-in">
        {checking ? t("reconnecting") : seconds === null ? "" : t("retryIn").replace("{n}", String(seconds))}
      </span>
      <button type="button" className="btn small" onClick={onRetry} disabled={checking} data-testid="access-retry">{t("retryNow")}</button>
    </div>
  );
}
