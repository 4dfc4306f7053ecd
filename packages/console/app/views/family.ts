/**
 * An execution's relatives (docs/protocol.md §8, §1.7): the subagents its steps started, as a tree
 * with their status, and the turns of its session. Built from the executions list (`spawned_by`,
 * `session`); a kernel without subagents or sessions simply has none to show.
 */
import type { Execution, Step } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { status } from "../format.js";
import { usePoll } from "../hooks.js";
import { kernel } from "../kernel.js";

const LIST_LIMIT = 200;

function Tree({
  id,
  all,
  steps,
}: {
  id: string;
  all: readonly Execution[];
  steps: readonly Step[];
}): ComponentChild {
  const children = all.filter((e) => e.spawnedBy?.executionId === id);
  if (children.length === 0) return null;
  return h(
    "ul",
    { class: "tree" },
    children.map((c) => {
      const step = steps.find((s) => s.stepId === c.spawnedBy?.stepId);
      return h("li", { "data-child": c.id }, [
        h("a", { href: `#/exec/${c.id}` }, h("code", null, c.id)),
        " ",
        c.agentId,
        " ",
        status(c.status),
        step === undefined
          ? null
          : h("span", { class: "muted" }, ` from step ${step.target} #${step.occurrence}`),
        h(Tree, { id: c.id, all, steps: [] }),
      ]);
    }),
  );
}

export function Family({
  execution,
  steps,
}: {
  execution: Execution;
  steps: readonly Step[];
}): ComponentChild {
  const { data } = usePoll(
    async () => (await kernel().list({ limit: LIST_LIMIT })).executions,
    [execution.id],
  );
  const all = data ?? [];
  const hasChildren = all.some((e) => e.spawnedBy?.executionId === execution.id);
  const turns = execution.session === undefined ? [] : all.filter((e) => e.session === execution.session);
  if (!hasChildren && turns.length === 0) return null;
  return h("section", { id: "family" }, [
    hasChildren ? h("h3", null, "Subagents") : null,
    hasChildren
      ? h("div", { id: "subagents", class: "card" }, h(Tree, { id: execution.id, all, steps }))
      : null,
    turns.length === 0 ? null : h("h3", null, ["Session ", h("code", null, execution.session ?? "")]),
    turns.length === 0
      ? null
      : h(
          "ol",
          { id: "session-turns", class: "card" },
          [...turns]
            .reverse()
            .map((t) =>
              h("li", { "data-turn": t.id }, [
                t.id === execution.id
                  ? h("b", null, "this execution ")
                  : h("a", { href: `#/exec/${t.id}` }, h("code", null, t.id)),
                " ",
                status(t.status),
              ]),
            ),
        ),
  ]);
}
