// Rule `priority`, as the production kernel applies it (internal/policy/engine.go): ascending,
// unique, a rule without one counting as 0. Bundles without any priority (the newest documented
// language) keep document order. The bundle below is the one the raw-HTTP differential comparison
// used: the Go kernel lets the 980 allow rule win over the 990 deny rule listed before it.

import { compilePolicyBundle, evaluatePolicyStep } from "@rebuno/policy";
import { ValidationError } from "@rebuno/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { startDevKernel } from "../src/index.js";
import { DEFAULT_AGENTS, Harness } from "./harness.js";
import { stores } from "./stores.js";

const DIFFERENTIAL = `default_action: deny
rules:
  - id: deny-late
    priority: 990
    when: { target: "send_*" }
    then: { decision: deny, reason: "990 deny" }
  - id: allow-early
    priority: 980
    when: { target: "send_*" }
    then: { decision: allow }
`;

const DUPLICATE = `rules:
  - { id: a, priority: 5, when: { target: x }, then: { decision: allow } }
  - { id: b, priority: 5, when: { target: y }, then: { decision: deny } }
`;

const verdict = (yaml: string, target: string) => {
  const v = evaluatePolicyStep(compilePolicyBundle(yaml), { target });
  return [v.decision, v.ruleId];
};

describe("priority orders rules like the production kernel", () => {
  it("the lower number wins whatever the document order (980 allow beats 990 deny)", () => {
    expect(verdict(DIFFERENTIAL, "send_email")).toEqual(["allow", "allow-early"]);
  });

  it("negative priorities come first", () => {
    const yaml = `rules:
  - { id: zero, priority: 0, then: { decision: deny } }
  - { id: minus, priority: -3, then: { decision: allow } }
`;
    expect(verdict(yaml, "t")).toEqual(["allow", "minus"]);
  });

  it("once any rule has a priority, a rule without one counts as 0", () => {
    const yaml = `rules:
  - { id: late, priority: 10, then: { decision: deny } }
  - { id: unnumbered, then: { decision: allow } }
`;
    expect(verdict(yaml, "t")).toEqual(["allow", "unnumbered"]);
    const below = `rules:
  - { id: unnumbered, then: { decision: allow } }
  - { id: early, priority: -1, then: { decision: deny } }
`;
    expect(verdict(below, "t")).toEqual(["deny", "early"]);
  });

  it("without any priority, document order (two unnumbered rules are not a duplicate)", () => {
    const yaml = `rules:
  - { id: first, when: { target: x }, then: { decision: deny } }
  - { id: second, when: { target: x }, then: { decision: allow } }
`;
    expect(verdict(yaml, "x")).toEqual(["deny", "first"]);
  });

  it("duplicate priorities are refused with the kernel's message", () => {
    expect(() => compilePolicyBundle(DUPLICATE)).toThrow(ValidationError);
    expect(() => compilePolicyBundle(DUPLICATE)).toThrow(
      'invalid policy bundle: duplicate priority 5 used by "a" and "b"',
    );
  });

  it("two rules without priority next to a numbered one share 0 and are refused", () => {
    const yaml = `rules:
  - { id: a, then: { decision: allow } }
  - { id: b, then: { decision: deny } }
  - { id: c, priority: 1, then: { decision: deny } }
`;
    expect(() => compilePolicyBundle(yaml)).toThrow('duplicate priority 0 used by "a" and "b"');
  });

  it("a priority must be an integer", () => {
    for (const bad of ["1.5", "high", '"980"']) {
      const yaml = `rules:\n  - { id: a, priority: ${bad}, then: { decision: allow } }\n`;
      expect(() => compilePolicyBundle(yaml), bad).toThrow('rule "a".priority: expected');
    }
  });
});

describe.each(stores)("priority in the running kernel ($name store)", (store) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a submitted step gets the 980 rule's decision", async () => {
    h = await Harness.start(store, { agents: [{ ...DEFAULT_AGENTS[0]!, policy: DIFFERENTIAL }] });
    const { id, lease } = await h.started();
    const step = await h.submit(id, lease, { kind: "tool_call", target: "send_email", args: {} });
    expect(step.status).toBe(200);
    expect(step.body.decision).toBe("proceed");
    const allowed = (await h.events(id)).find((e) => e.type === "step.allowed");
    expect(allowed.payload.rule_id).toBe("allow-early");
  });

  it("POST /v0/policies refuses duplicate priorities with 400 validation_error", async () => {
    h = await Harness.start(store);
    const answer = await h.client("POST", "/v0/policies/alpha", { bundle: DUPLICATE });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      code: "validation_error",
      message: 'invalid policy bundle: duplicate priority 5 used by "a" and "b"',
    });
  });
});

describe("priority at boot", () => {
  it("a provisioned bundle with duplicate priorities fails the start", async () => {
    await expect(
      startDevKernel({ agents: [{ ...DEFAULT_AGENTS[0]!, policy: DUPLICATE }], onError: () => {} }),
    ).rejects.toThrow('duplicate priority 5 used by "a" and "b"');
  });
});
