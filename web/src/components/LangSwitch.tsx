import { useI18n, type Lang } from "../i18n";

/** 中文 / EN, Chinese first. */
export function LangSwitch({ lang, onLang }: { lang: Lang; onLang: (lang: Lang) => void }) {
  const { t } = useI18n();
  return (
    <span className="seg" role="group" aria-label={t("language")}>
      <button type="button" aria-pressed={lang === "zh"} onClick={() => onLang("zh")} data-testid="lang-zh">中文</button>
      <button type="button" aria-pressed={lang === "en"} onClick={() => onLang("en")} data-testid="lang-en">EN</button>
    </span>
  );
}
