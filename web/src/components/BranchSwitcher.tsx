import { useI18n } from "../i18n";

interface Props {
  branch: string | undefined;
  options: string[] | undefined;
  onSelect: (branch: string) => void;
}

/** "‹ 2 / 3 ›" between sibling versions of a message; nothing when it has none. */
export function BranchSwitcher({ branch, options, onSelect }: Props) {
  const { t } = useI18n();
  if (!options || options.length < 2 || branch === undefined) return null;
  const index = options.indexOf(branch);
  return (
    <span className="branches" data-testid="branch-switcher">
      <button
        type="button"
        className="icon"
        aria-label={t("previousBranch")}
        disabled={index <= 0}
        onClick={() => onSelect(options[index - 1])}
        data-testid="branch-prev"
      >
        ‹
      </button>
      <span data-testid="branch-position">{index + 1} / {options.length}</span>
      <button
        type="button"
        className="icon"
        aria-label={t("nextBranch")}
        disabled={index >= options.length - 1}
        onClick={() => onSelect(options[index + 1])}
        data-testid="branch-next"
      >
        ›
      </button>
    </span>
  );
}
