import { describe, expect, it } from "vitest";
import { compilePolicyBundle, evaluatePolicyStep } from "../src/index.js";

const BUNDLE = `default_action: deny
rules:
  - id: no-force
    when: { target: git_push, arguments: { force: { equals: "true" } } }
    then: { decision: deny, reason: force pushes are not allowed }
  - id: quiet-deny
    when: { target: rm_rf }
    then: { decision: deny }
  - id: reads
    when: { targets: ["fs_read*"] }
    then: { decision: allow }
  - id: refunds
    when: { target: refund }
    then:
      decision: require_approval
      approval_config: { approvers: [finance], timeout: 30m }
`;

describe("evaluatePolicyStep (the public entry used by `rebuno policy test`)", () => {
  const policy = compilePolicyBundle(BUNDLE);

  it("a rule's deny reports its own reason", () => {
    const v = evaluatePolicyStep(policy, { target: "git_push", args: { force: true } });
    expect([v.decision, v.ruleId, v.reason]).toEqual(["deny", "no-force", "force pushes are not allowed"]);
  });

  it("a deny without reason reports policy_denied, as the kernel does", () => {
    const v = evaluatePolicyStep(policy, { target: "rm_rf" });
    expect([v.decision, v.ruleId, v.reason]).toEqual(["deny", "quiet-deny", "policy_denied"]);
  });

  it("the default deny reports its fixed reason", () => {
    const v = evaluatePolicyStep(policy, { target: "git_push", args: { force: false } });
    expect([v.decision, v.ruleId, v.reason]).toEqual(["deny", "default", "no explicit allow rule matched"]);
  });

  it("an allow rule without reason has none; kind, args and agent default", () => {
    const v = evaluatePolicyStep(policy, { target: "fs_read_file" });
    expect([v.decision, v.ruleId, v.reason]).toEqual(["allow", "reads", undefined]);
  });

  it("an unmatched local step is allowed by the built-in local rule", () => {
    const v = evaluatePolicyStep(policy, { target: "anything", kind: "local" });
    expect([v.decision, v.ruleId, v.reason]).toEqual(["allow", "local", "local step"]);
  });

  it("require_approval carries the rule's approval settings", () => {
    const v = evaluatePolicyStep(policy, { target: "refund", args: { amount: 5 } });
    expect(v.decision).toBe("require_approval");
    expect(v.result.approval).toEqual({ approvers: ["finance"], timeoutMs: 1_800_000 });
  });
});
