import { useState } from "react";
import { describeError, downloadWithKey, reportUrl, storedKey } from "../api";
import { useI18n } from "../i18n";
import { Icon } from "./Icon";

/** Download of a written report; fetched with the API key header, so it works with auth on. */
export function ReportLink({ threadId, path }: { threadId: string; path: string }) {
  const { t } = useI18n();
  const [error, setError] = useState<unknown>(null);
  const file = path.split(/[\\/]/).pop() ?? path;
  const url = reportUrl(threadId, path);
  return (
    <div className="report" data-testid="report-ready">
      <span><Icon name="file" /> {t("reportReady")}: <code>{file}</code></span>
      <a
        href={url}
        download={file}
        className="btn small"
        data-testid="report-download"
        onClick={(e) => {
          e.preventDefault();
          setError(null);
          downloadWithKey(url, storedKey(), file).catch((err) => setError(err));
        }}
      >
        {t("download")}
      </a>
      {error != null && <span className="error-text" role="alert">{describeError(error, t)}</span>}
    </div>
  );
}
