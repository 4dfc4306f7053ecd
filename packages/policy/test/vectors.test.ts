import { loadVector } from "@rebuno/test-kit";
import { describe, expect, it } from "vitest";
import { compilePolicyBundle, PERMISSIVE_RESULT, type PolicyStepKind } from "../src/index.js";

interface VectorCase {
  name: string;
  kind: PolicyStepKind;
  target: string;
  args_json: string;
  expect: string;
  expect_rule: string;
  expect_decision_reason?: string;
}
interface Vectors {
  bundle_yaml: string;
  agent_id: string;
  cases: VectorCase[];
  no_bundle: { expect: string; expect_rule: string };
}

// vectors/ at the repository root (a copy kept in the repository), read through the test kit.
const vectors = loadVector<Vectors>("policy_vectors");

describe("policy_vectors.json", () => {
  const policy = compilePolicyBundle(vectors.bundle_yaml);

  it("has cases", () => {
    expect(vectors.cases.length).toBeGreaterThan(0);
  });

  it.each(vectors.cases)("$name", (c) => {
    const result = policy.evaluate({
      agentId: vectors.agent_id,
      kind: c.kind,
      target: c.target,
      args: JSON.parse(c.args_json),
    });
    expect(result.decision).toBe(c.expect);
    expect(result.ruleId).toBe(c.expect_rule);
    if (c.expect_decision_reason !== undefined) expect(result.reason).toBe(c.expect_decision_reason);
  });

  it("no bundle → permissive", () => {
    expect(PERMISSIVE_RESULT.decision).toBe(vectors.no_bundle.expect);
    expect(PERMISSIVE_RESULT.ruleId).toBe(vectors.no_bundle.expect_rule);
  });

  it("carries the require_approval options of the matched rule", () => {
    const r = policy.evaluate({ agentId: "demo", kind: "tool_call", target: "mcp/fs/write", args: {} });
    expect(r).toEqual({
      decision: "require_approval",
      ruleId: "mcp-needs-human",
      reason: "mcp calls need a human",
      approval: { approvers: ["ops"], timeoutMs: 600_000 },
    });
  });
});
