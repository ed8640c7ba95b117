import { useState } from "react";
import { describeError, probeAccess } from "../api";
import { useI18n, type Lang } from "../i18n";
import { LangSwitch } from "./LangSwitch";

/** Asks for the API key when the service has keys on; the caller keeps it in sessionStorage. */
interface Props {
  onKey: (key: string) => void;
  lang: Lang;
  onLang: (lang: Lang) => void;
}

export function SignIn({ onKey, lang, onLang }: Props) {
  const { t } = useI18n();
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div className="signin-wrap">
      <form
        className="signin"
        data-testid="signin"
        aria-label={t("signInTitle")}
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          const { access, error: why } = await probeAccess(key.trim());
          setBusy(false);
          if (access === "ok") onKey(key.trim());
          else setError(access === "needs-key" ? t("badKey") : describeError(why, t)); // the server down is not a wrong key
        }}
      >
        <div className="signin-head">
          <h1>orecast</h1>
          <LangSwitch lang={lang} onLang={onLang} />
        </div>
        <h2>{t("signInTitle")}</h2>
        <p className="muted">{t("signInText")}</p>
        <label>
          {t("apiKey")}
          <input type="password" autoComplete="current-password" value={key} onChange={(e) => setKey(e.target.value)} data-testid="signin-key" autoFocus />
        </label>
        {error && <p className="error-text" role="alert" data-testid="signin-error">{error}</p>}
        <button type="submit" className="btn primary" disabled={!key.trim() || busy} data-testid="signin-submit">{t("signIn")}</button>
      </form>
    </div>
  );
}
