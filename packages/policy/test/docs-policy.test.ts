// docs/policy.md, checked against the policy engine (the one the dev kernel and `rebuno policy test`
// run): every YAML block is marked, every example compiles, every table of steps under an example
// evaluates to what the table says, every refused example is refused with the message shown, and
// the TypeScript snippet runs.
import { readFileSync } from "node:fs";
// #region evaluate
import { compilePolicyBundle, evaluatePolicyStep } from "@rebuno/policy";

const policy = compilePolicyBundle(`
default_action: deny
rules:
  - id: no-force-push
    when: { target: git_push, arguments: { force: { equals: "true" } } }
    then: { decision: deny, reason: force pushes are not allowed }
  - id: git
    when: { target: "git_*" }
    then: { decision: allow }
`);
const verdict = evaluatePolicyStep(policy, { target: "git_push", args: { force: true } });

// verdict.decision === "deny", verdict.ruleId === "no-force-push",
// verdict.reason === "force pushes are not allowed"
// #endregion
import { describe, expect, it } from "vitest";
import type { PolicyStepKind } from "../src/index.js";

const DOC = readFileSync(new URL("../../../docs/policy.md", import.meta.url), "utf8");
// Judge examples need an endpoint to compile; nothing is called.
const OPTIONS = { judgeEndpoint: "http://127.0.0.1:9/judge" };

interface Block {
  readonly marker: string | undefined;
  readonly name: string | undefined;
  readonly yaml: string;
  /** Text right after the block (where a refused example shows its error). */
  readonly after: string;
}

function yamlBlocks(): Block[] {
  const out: Block[] = [];
  const re = /(?:<!-- (policy-[a-z]+)(?:: (\S+))? -->\s*\n)?```yaml\n([\s\S]*?)```/g;
  for (const m of DOC.matchAll(re)) {
    out.push({ marker: m[1], name: m[2], yaml: m[3]!, after: DOC.slice(m.index + m[0].length) });
  }
  return out;
}

interface Case {
  readonly kind: PolicyStepKind;
  readonly target: string;
  readonly args: unknown;
  readonly decision: string;
  readonly rule: string;
  readonly reason: string;
}

function cases(name: string): Case[] {
  const start = DOC.indexOf(`<!-- policy-cases: ${name} -->`);
  if (start < 0) return [];
  const lines = DOC.slice(start).split("\n").slice(1);
  const rows: Case[] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith("|")) break;
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    const [kind, target, args, decision, rule, reason] = cells as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    rows.push({
      kind: kind as PolicyStepKind,
      target,
      args: JSON.parse(args.replace(/^`|`$/g, "")),
      decision,
      rule,
      reason,
    });
  }
  return rows;
}

function wrapFragment(decision: string, fragment: string): string {
  const body = fragment
    .trimEnd()
    .split("\n")
    .map((l) => `      ${l}`)
    .join("\n");
  return `rules:\n  - id: fragment\n    then:\n      decision: ${decision}\n${body}\n`;
}

describe("docs/policy.md", () => {
  const blocks = yamlBlocks();

  it("marks every YAML block (example, fragment, invalid or schema)", () => {
    expect(blocks.length).toBeGreaterThan(5);
    for (const b of blocks) expect(b.marker, b.yaml.slice(0, 60)).toBeDefined();
  });

  const examples = blocks.filter((b) => b.marker === "policy-example");
  it.each(examples.map((b) => [b.name!, b] as const))(
    "example %s compiles and its table holds",
    (name, b) => {
      const compiled = compilePolicyBundle(b.yaml, OPTIONS);
      const table = cases(name);
      expect(table.length, `a policy-cases table for ${name}`).toBeGreaterThan(0);
      for (const c of table) {
        const v = evaluatePolicyStep(compiled, { kind: c.kind, target: c.target, args: c.args });
        expect([v.decision, v.ruleId, v.reason ?? ""], `${c.target} ${JSON.stringify(c.args)}`).toEqual([
          c.decision,
          c.rule,
          c.reason,
        ]);
      }
    },
  );

  it.each(blocks.filter((b) => b.marker === "policy-fragment").map((b) => [b.name!, b] as const))(
    "fragment under decision %s compiles",
    (decision, b) => {
      expect(() => compilePolicyBundle(wrapFragment(decision, b.yaml), OPTIONS)).not.toThrow();
    },
  );

  it.each(blocks.filter((b) => b.marker === "policy-invalid").map((b) => [b.name!, b] as const))(
    "invalid example %s is refused with the message shown",
    (_name, b) => {
      const shown = /^\s*```text\n([^\n]*)\n```/.exec(b.after)?.[1];
      expect(shown).toBeDefined();
      expect(() => compilePolicyBundle(b.yaml, OPTIONS)).toThrow(shown!);
    },
  );

  it("the evaluatePolicyStep snippet gives what its comment says", () => {
    expect([verdict.decision, verdict.ruleId, verdict.reason]).toEqual([
      "deny",
      "no-force-push",
      "force pushes are not allowed",
    ]);
  });
});
