/**
 * An agent's policy bundle (docs/protocol.md §4.14, §9): edit it, test the edit against recent
 * executions (every recorded step whose decision would change, docs/protocol.md §9.10), see the diff, then save.
 * The backtest is hidden, with a note, on a kernel without the policy-test route.
 */
import { NotSupportedByKernel } from "@rebuno/client";
import { type ComponentChild, h } from "preact";
import { useEffect, useState } from "preact/hooks";
import { kernel, message } from "../kernel.js";
import { lineDiff } from "../policy/diff.js";

const BACKTEST_LIMIT = 100;

interface TestRow {
  readonly execution_id?: string;
  readonly target?: string;
  readonly decision?: string;
  readonly rule_id?: string;
  readonly expect?: string;
  readonly matched?: boolean;
  readonly reason?: string;
}

function Diff({ before, after }: { before: string; after: string }): ComponentChild {
  const lines = lineDiff(before, after);
  return h(
    "pre",
    { id: "policy-diff", class: "diff" },
    lines.map((l) =>
      h(
        "div",
        { class: l.op, "data-op": l.op },
        `${l.op === "add" ? "+ " : l.op === "remove" ? "- " : "  "}${l.text}`,
      ),
    ),
  );
}

function Backtest({ rows }: { rows: readonly TestRow[] }): ComponentChild {
  const changed = rows.filter((r) => r.matched === false);
  return h("div", { id: "backtest", class: "card" }, [
    h("p", null, `${rows.length} recorded steps tested; ${changed.length} would be decided differently.`),
    changed.length === 0
      ? null
      : h("table", null, [
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ["Execution", "Step", "Recorded", "With this bundle", "Rule"].map((t) => h("th", null, t)),
            ),
          ),
          h(
            "tbody",
            null,
            changed.map((r) =>
              h("tr", { "data-changed": r.target }, [
                h(
                  "td",
                  null,
                  r.execution_id === undefined
                    ? ""
                    : h(
                        "a",
                        { href: `#/exec/${r.execution_id}` },
                        h("code", null, r.execution_id.slice(0, 13)),
                      ),
                ),
                h("td", null, r.target ?? ""),
                h("td", null, h("span", { class: `status ${r.expect ?? ""}` }, r.expect ?? "")),
                h("td", null, h("span", { class: `status ${r.decision ?? ""}` }, r.decision ?? "")),
                h("td", null, [r.rule_id ?? "", r.reason === undefined ? "" : `: ${r.reason}`]),
              ]),
            ),
          ),
        ]),
  ]);
}

export function PolicyView({ agentId }: { agentId: string }): ComponentChild {
  const [stored, setStored] = useState<string | undefined>(undefined);
  const [draft, setDraft] = useState("");
  const [stage, setStage] = useState<"edit" | "review" | "saved">("edit");
  const [backtest, setBacktest] = useState<readonly TestRow[] | undefined>(undefined);
  const [note, setNote] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    kernel()
      .getAgent(agentId)
      .then(
        (a) => {
          setStored(a.policyBundle ?? "");
          setDraft(a.policyBundle ?? "");
        },
        (err: unknown) => setError(message(err)),
      );
  }, [agentId]);
  const test = async (): Promise<void> => {
    setError(undefined);
    try {
      const answer = await kernel().testPolicy(agentId, {
        bundle: draft,
        executions: { limit: BACKTEST_LIMIT },
      });
      setBacktest(Array.isArray(answer.results) ? (answer.results as TestRow[]) : []);
    } catch (err) {
      if (NotSupportedByKernel.isInstance(err))
        setNote(
          "Testing against recent executions is hidden: this kernel has no policy-test route (legacy generation).",
        );
      else setError(message(err));
    }
  };
  const save = async (): Promise<void> => {
    setError(undefined);
    try {
      await kernel().setPolicy(agentId, draft);
      setStored(draft);
      setStage("saved");
    } catch (err) {
      setError(message(err));
    }
  };
  if (stored === undefined)
    return h("section", null, [
      h("h2", null, ["Policy of ", h("code", null, agentId)]),
      error === undefined ? null : h("div", { class: "alert" }, error),
    ]);
  return h("section", { id: "policy" }, [
    h("h2", null, ["Policy of ", h("code", null, agentId)]),
    error === undefined ? null : h("div", { class: "alert" }, error),
    note === undefined ? null : h("p", { class: "muted note", id: "backtest-unsupported" }, note),
    h("label", { for: "policy-editor" }, "Bundle (YAML)"),
    h("textarea", {
      id: "policy-editor",
      rows: 12,
      spellcheck: false,
      value: draft,
      onInput: (e: Event & { currentTarget: HTMLTextAreaElement }) => {
        setDraft(e.currentTarget.value);
        setStage("edit");
        setBacktest(undefined);
      },
    }),
    h("div", { class: "bar" }, [
      h("button", { id: "policy-test", onClick: () => void test() }, "Test against recent executions"),
      h(
        "button",
        { id: "policy-review", disabled: draft === stored, onClick: () => setStage("review") },
        "Review changes",
      ),
      stage === "saved" ? h("span", { id: "policy-saved", class: "muted" }, "Saved.") : null,
    ]),
    backtest === undefined ? null : h(Backtest, { rows: backtest }),
    stage !== "review"
      ? null
      : h("div", { class: "card" }, [
          h("h3", null, "Changes to save"),
          h(Diff, { before: stored, after: draft }),
          h("button", { id: "policy-save", onClick: () => void save() }, "Save this bundle"),
        ]),
  ]);
}
