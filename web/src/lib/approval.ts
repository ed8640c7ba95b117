/**
 * Human-in-the-loop interrupts of langchain's HumanInTheLoopMiddleware, in both of its modes:
 * "batched" (one interrupt whose value lists `action_requests`, answered `{decisions: [...]}` by
 * position) and "per_call" (one `type: "tool_approval"` interrupt per call, answered with a map
 * from interrupt id to one decision).
 */

export interface Action {
  name: string;
  args: Record<string, unknown>;
  description?: string;
  allowed: string[];
}

export type Decision =
  | { type: "approve" }
  | { type: "edit"; edited_action: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };

export interface Pending {
  actions: Action[];
  /** The `Command.resume` value for one decision per action (same order as `actions`). */
  resume: (decisions: Decision[]) => unknown;
}

interface InterruptLike {
  id?: string;
  value?: unknown;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => !!v && typeof v === "object" && !Array.isArray(v);

export function pendingApproval(interrupts: InterruptLike[]): Pending | null {
  const batched = interrupts.find((i) => isRec(i.value) && Array.isArray(i.value.action_requests));
  if (batched && isRec(batched.value)) {
    const requests = batched.value.action_requests as Rec[];
    const configs = (Array.isArray(batched.value.review_configs) ? batched.value.review_configs : []) as Rec[];
    const actions = requests.map((r) => {
      const cfg = configs.find((c) => c.action_name === r.name);
      return {
        name: String(r.name),
        args: isRec(r.args) ? r.args : {},
        description: typeof r.description === "string" ? r.description : undefined,
        allowed: Array.isArray(cfg?.allowed_decisions) ? (cfg.allowed_decisions as string[]) : ["approve", "reject"],
      };
    });
    return { actions, resume: (decisions) => ({ decisions }) };
  }
  const perCall = interrupts.filter((i) => isRec(i.value) && i.value.type === "tool_approval" && i.id);
  if (perCall.length > 0) {
    const actions = perCall.map((i) => {
      const v = i.value as Rec;
      return {
        name: String(v.name),
        args: isRec(v.args) ? v.args : {},
        description: typeof v.description === "string" ? v.description : undefined,
        allowed: ["approve", "edit", "reject"],
      };
    });
    return {
      actions,
      resume: (decisions) => Object.fromEntries(perCall.map((i, n) => [i.id as string, decisions[n]])),
    };
  }
  return null;
}

const CJK = /[\u3400-\u9fff]/;

/**
 * A description written in both languages ("导出报告需要批准 / Exporting a report needs approval",
 * as the analyst's approval policy says it) cut to the page's language; any other text as it is.
 */
export function descriptionIn(text: string, lang: "zh" | "en"): string {
  const halves = text.split(" / ");
  if (halves.length !== 2) return text;
  const [zh, en] = CJK.test(halves[0]) ? halves : [halves[1], halves[0]];
  if (!CJK.test(zh) || CJK.test(en)) return text;
  return (lang === "zh" ? zh : en).trim();
}
