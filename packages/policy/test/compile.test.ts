import { createHash } from "node:crypto";
import { ValidationError } from "@rebuno/protocol";
import { describe, expect, it } from "vitest";
import { compilePolicyBundle, denialReason, POLICY_DENIED_REASON, type PolicyInput } from "../src/index.js";

const JUDGE = { judgeEndpoint: "http://127.0.0.1:9/judge" };
const tool = (target: string, args: unknown = {}, agentId = "a1"): PolicyInput => ({
  agentId,
  kind: "tool_call",
  target,
  args,
});

/** Builds a one-rule bundle; `rule` is the YAML body of the rule, indented by 4. */
const oneRule = (rule: string, top = "default_action: deny\n") => `${top}rules:\n  - id: r\n${rule}`;

function rejection(yaml: string, opts?: { judgeEndpoint?: string }): ValidationError {
  try {
    compilePolicyBundle(yaml, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    const v = err as ValidationError;
    expect(v.message.startsWith("invalid policy bundle: ")).toBe(true);
    expect(v.code).toBe("validation_error");
    expect(v.status).toBe(400);
    return v;
  }
  throw new Error(`bundle was accepted:\n${yaml}`);
}

describe("compilePolicyBundle: load-time rejections", () => {
  const cases: [string, string, RegExp][] = [
    ["YAML syntax error", "rules: [", /YAML/],
    ["duplicate YAML key", "default_action: deny\ndefault_action: allow\n", /YAML.*unique/],
    ["top level not a mapping", "- a\n- b\n", /bundle: expected a mapping/],
    ["unknown top-level key", "default_action: deny\nversion: 2\n", /unknown key "version"/],
    ["rules not a list", "rules: {a: 1}\n", /rules: expected a list/],
    ["missing rule id", "rules:\n  - then: {decision: allow}\n", /rules\[0\]: rule id is required/],
    ["empty rule id", 'rules:\n  - id: ""\n    then: {decision: allow}\n', /rule id is required/],
    [
      "duplicate rule id",
      "rules:\n  - id: x\n    then: {decision: allow}\n  - id: x\n    then: {decision: deny}\n",
      /rules\[1\]: duplicate rule id "x"/,
    ],
    [
      "unknown rule key",
      oneRule("    then: {decision: allow}\n    enabled: true\n"),
      /unknown key "enabled"/,
    ],
    [
      "unknown when key",
      oneRule("    when: {tool: x}\n    then: {decision: allow}\n"),
      /when: unknown key "tool"/,
    ],
    [
      "unknown then key",
      oneRule("    then: {decision: allow, rule_id: other}\n"),
      /then: unknown key "rule_id"/,
    ],
    [
      "unknown predicate key",
      oneRule("    when: {arguments: {a: {startswith: x}}}\n    then: {decision: allow}\n"),
      /arguments\.a: unknown key "startswith"/,
    ],
    [
      "unknown approval_config key",
      oneRule("    then: {decision: require_approval, approval_config: {who: [a]}}\n"),
      /approval_config: unknown key "who"/,
    ],
    [
      "unknown rate_limit key",
      oneRule("    then: {decision: allow, rate_limit: {max_calls: 1, window: 1s, burst: 2}}\n"),
      /rate_limit: unknown key "burst"/,
    ],
    [
      "unknown budget key",
      oneRule("    then: {decision: allow, budget: {max_tokens: 1, tokens: 2}}\n"),
      /budget: unknown key "tokens"/,
    ],
    ["missing then", oneRule("    when: {target: x}\n"), /then\.decision is required/],
    ["missing decision", oneRule("    then: {reason: x}\n"), /then\.decision is required/],
    ["unknown decision", oneRule("    then: {decision: maybe}\n"), /"maybe" is not one of allow, deny/],
    [
      "empty predicate {}",
      oneRule("    when: {arguments: {a: {}}}\n    then: {decision: allow}\n"),
      /arguments\.a: argument predicate has no constraint/,
    ],
    [
      "null predicate",
      oneRule("    when:\n      arguments:\n        a:\n    then: {decision: allow}\n"),
      /argument predicate has no constraint/,
    ],
    [
      'only equals: ""',
      oneRule('    when: {arguments: {a: {equals: ""}}}\n    then: {decision: allow}\n'),
      /argument predicate has no constraint/,
    ],
    [
      "invalid regex (unbalanced)",
      oneRule('    when: {arguments: {a: {regex: "(ab"}}}\n    then: {decision: allow}\n'),
      /arguments\.a\.regex: error parsing regexp: missing closing \): `\(ab`/,
    ],
    [
      "regex lookahead",
      oneRule('    when: {arguments: {a: {regex: "a(?=b)"}}}\n    then: {decision: allow}\n'),
      /error parsing regexp: invalid or unsupported Perl syntax: `\(\?=`/,
    ],
    [
      "regex backreference",
      oneRule('    when: {arguments: {a: {regex: "(a)\\\\1"}}}\n    then: {decision: allow}\n'),
      /error parsing regexp: invalid escape sequence: `\\1`/,
    ],
    [
      "malformed glob in target",
      oneRule('    when: {target: "a[b"}\n    then: {decision: allow}\n'),
      /malformed glob/,
    ],
    [
      "malformed glob in targets",
      oneRule('    when: {targets: [ok, "x\\\\"]}\n    then: {decision: allow}\n'),
      /targets\[1\]: malformed glob/,
    ],
    [
      "judge block on a non-judge rule",
      oneRule("    then: {decision: allow, judge: {threshold: 0.5}}\n"),
      /then\.judge is only allowed on rules with decision judge/,
    ],
    [
      "bad duration",
      oneRule("    then: {decision: require_approval, approval_config: {timeout: 10 minutes}}\n"),
      /approval_config\.timeout: time: unknown unit/,
    ],
    [
      "duration without unit",
      oneRule("    then: {decision: allow, rate_limit: {max_calls: 1, window: 30}}\n"),
      /rate_limit\.window: time: missing unit/,
    ],
    [
      "negative duration",
      oneRule("    then: {decision: allow, rate_limit: {max_calls: 1, window: -1s}}\n"),
      /must not be negative/,
    ],
    [
      "rate limit without window",
      oneRule("    then: {decision: allow, rate_limit: {max_calls: 5}}\n"),
      /window must be a positive duration/,
    ],
    [
      "non-integer max_calls",
      oneRule("    then: {decision: allow, rate_limit: {max_calls: 1.5, window: 1s}}\n"),
      /max_calls: expected an integer/,
    ],
    [
      "string max_tokens",
      oneRule("    then: {decision: allow, budget: {max_tokens: lots}}\n"),
      /max_tokens: expected a number/,
    ],
    [
      "bad per_what",
      oneRule("    then: {decision: allow, rate_limit: {max_calls: 1, window: 1s, per_what: tenant}}\n"),
      /per_what: "tenant" is not one of execution, agent, global/,
    ],
    [
      "bad on_limiter_error",
      oneRule(
        "    then: {decision: allow, rate_limit: {max_calls: 1, window: 1s, on_limiter_error: retry}}\n",
      ),
      /on_limiter_error/,
    ],
    [
      "bad on_exceed",
      oneRule("    then: {decision: allow, budget: {max_tokens: 1, on_exceed: warn}}\n"),
      /on_exceed/,
    ],
    ["bad step_kind", oneRule("    when: {step_kind: http}\n    then: {decision: allow}\n"), /step_kind/],
    ["bad default_action", "default_action: permit\n", /default_action: "permit" is not one of allow, deny/],
    ["non-integer priority", oneRule("    priority: high\n    then: {decision: allow}\n"), /priority/],
    [
      "targets not a list",
      oneRule("    when: {targets: x}\n    then: {decision: allow}\n"),
      /expected a list/,
    ],
    ["when not a mapping", oneRule("    when: [a]\n    then: {decision: allow}\n"), /expected a mapping/],
  ];

  it.each(cases)("%s", (_name, yaml, pattern) => {
    expect(rejection(yaml).message).toMatch(pattern);
  });

  it("refuses judge rules when no judge endpoint is configured", () => {
    const yaml = "rules:\n  - id: ask-judge\n    then: {decision: judge}\n";
    expect(rejection(yaml).message).toBe(
      'invalid policy bundle: rule "ask-judge" uses decision judge but no judge endpoint is configured',
    );
    expect(rejection(yaml, { judgeEndpoint: "" }).message).toMatch(/no judge endpoint/);
  });

  it.each([
    ["threshold above 1", "{threshold: 1.5}", /threshold must be between 0 and 1/],
    ["negative threshold", "{threshold: -0.1}", /threshold must be between 0 and 1/],
    ["bad fallback", "{fallback: maybe}", /fallback/],
    ["unknown key", "{model: x}", /judge: unknown key "model"/],
  ])("judge: %s", (_name, block, pattern) => {
    expect(rejection(oneRule(`    then: {decision: judge, judge: ${block}}\n`), JUDGE).message).toMatch(
      pattern,
    );
  });
});

describe("compilePolicyBundle: accepted bundles", () => {
  it("hash is the lowercase hex sha256 of the YAML text", () => {
    const yaml = "default_action: allow\n# ünïcode comment\n";
    expect(compilePolicyBundle(yaml).hash).toBe(createHash("sha256").update(yaml, "utf8").digest("hex"));
  });

  it("empty bundle and null rules default to deny", () => {
    for (const yaml of ["", "rules:\n", "default_action:\n"]) {
      const r = compilePolicyBundle(yaml).evaluate(tool("x"));
      expect(r).toEqual({ decision: "deny", ruleId: "default", reason: "no explicit allow rule matched" });
    }
  });

  it("default_action allow", () => {
    expect(compilePolicyBundle("default_action: allow\n").evaluate(tool("x"))).toEqual({
      decision: "allow",
      ruleId: "default",
      reason: "default allow",
    });
  });

  it("unmatched local step is allowed even under default deny; matched local rules win", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: no-rm\n    when: {target: rm, step_kind: local}\n    then: {decision: deny}\n",
    );
    expect(p.evaluate({ agentId: "a", kind: "local", target: "now", args: {} })).toEqual({
      decision: "allow",
      ruleId: "local",
      reason: "local step",
    });
    expect(p.evaluate({ agentId: "a", kind: "local", target: "rm", args: {} })).toEqual({
      decision: "deny",
      ruleId: "no-rm",
    });
  });

  it("a rule without when matches every step", () => {
    const p = compilePolicyBundle("rules:\n  - id: all\n    then: {decision: allow}\n");
    expect(p.evaluate({ agentId: "a", kind: "llm_call", target: "m", args: null }).ruleId).toBe("all");
  });

  it("deny reason: returned only when the rule sets it; denialReason supplies policy_denied", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: a\n    when: {target: a}\n    then: {decision: deny, reason: nope}\n" +
        "  - id: b\n    when: {target: b}\n    then: {decision: deny}\n" +
        '  - id: c\n    when: {target: c}\n    then: {decision: deny, reason: ""}\n',
    );
    const a = p.evaluate(tool("a"));
    const b = p.evaluate(tool("b"));
    const c = p.evaluate(tool("c"));
    expect(a.reason).toBe("nope");
    expect(b).not.toHaveProperty("reason");
    expect(c).not.toHaveProperty("reason");
    expect(denialReason(a)).toBe("nope");
    expect(denialReason(b)).toBe(POLICY_DENIED_REASON);
    expect(POLICY_DENIED_REASON).toBe("policy_denied");
  });

  it("when fields are ANDed; targets/agent_ids are ORed within", () => {
    const p = compilePolicyBundle(
      [
        "rules:",
        "  - id: r",
        "    when:",
        "      target: 'db/*'",
        "      targets: ['*/read', '*/list']",
        "      agent_ids: [a1, a2]",
        "      step_kind: tool_call",
        "    then: {decision: allow}",
      ].join("\n"),
    );
    expect(p.evaluate(tool("db/users/read", {}, "a2")).ruleId).toBe("r");
    expect(p.evaluate(tool("db/users/write", {}, "a2")).ruleId).toBe("default");
    expect(p.evaluate(tool("fs/read", {}, "a2")).ruleId).toBe("default");
    expect(p.evaluate(tool("db/users/read", {}, "a3")).ruleId).toBe("default");
    expect(p.evaluate({ ...tool("db/x/read", {}, "a1"), kind: "llm_call" }).ruleId).toBe("default");
  });

  it("agent_id is an exact match", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: r\n    when: {agent_id: 'bot*'}\n    then: {decision: allow}\n",
    );
    expect(p.evaluate(tool("x", {}, "bot*")).ruleId).toBe("r");
    expect(p.evaluate(tool("x", {}, "bot1")).ruleId).toBe("default");
  });

  it("argument predicates: equals, contains, one_of and regex must all pass", () => {
    const p = compilePolicyBundle(
      oneRule(
        [
          "    when:",
          "      arguments:",
          "        dsn: {contains: prod, regex: '^postgres://', one_of: ['postgres://prod/a', 'postgres://prod/b']}",
          "        n: {equals: '3'}",
          "    then: {decision: deny}",
          "",
        ].join("\n"),
        "default_action: allow\n",
      ),
    );
    expect(p.evaluate(tool("x", { dsn: "postgres://prod/a", n: 3 })).ruleId).toBe("r");
    expect(p.evaluate(tool("x", { dsn: "postgres://prod/c", n: 3 })).ruleId).toBe("default");
    expect(p.evaluate(tool("x", { dsn: "mysql://prod/a", n: 3 })).ruleId).toBe("default");
    expect(p.evaluate(tool("x", { dsn: "postgres://prod/a", n: 4 })).ruleId).toBe("default");
    expect(p.evaluate(tool("x", { dsn: "postgres://prod/a" })).ruleId).toBe("default");
    expect(p.evaluate(tool("x", "not an object")).ruleId).toBe("default");
    expect(p.evaluate(tool("x", null)).ruleId).toBe("default");
  });

  it('empty constraints next to real ones are "not set", like Go zero values', () => {
    const p = compilePolicyBundle(
      oneRule("    when: {arguments: {a: {equals: '', contains: x}}}\n    then: {decision: allow}\n"),
    );
    expect(p.evaluate(tool("t", { a: "xyz" })).ruleId).toBe("r");
  });

  it("regex predicates are unanchored and stringify non-strings first", () => {
    const p = compilePolicyBundle(
      oneRule("    when: {arguments: {v: {regex: 'e\\+0[0-9]'}}}\n    then: {decision: allow}\n"),
    );
    expect(p.evaluate(tool("t", { v: 1e7 })).ruleId).toBe("r"); // "1e+07"
    expect(p.evaluate(tool("t", { v: 10 })).ruleId).toBe("default");
  });

  it("unquoted YAML scalars compare by their source text (yaml.v3 into a Go string)", () => {
    const p = compilePolicyBundle(
      oneRule(
        "    when: {arguments: {n: {one_of: [1e+06, 0x1F, true, 2.50]}}}\n    then: {decision: allow}\n",
      ),
    );
    const hit = (v: unknown) => p.evaluate(tool("t", { n: v })).ruleId === "r";
    expect(hit(1_000_000)).toBe(true); // %v → "1e+06"
    expect(hit("0x1F")).toBe(true);
    expect(hit(31)).toBe(false);
    expect(hit(true)).toBe(true);
    expect(hit(2.5)).toBe(false); // %v → "2.5", not the literal "2.50"
    expect(hit("2.50")).toBe(true);
  });

  it("YAML anchors and aliases are resolved", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: a\n    when: {targets: &t [x, y]}\n    then: {decision: allow}\n" +
        "  - id: b\n    when: {targets: *t}\n    then: {decision: deny}\n",
    );
    expect(p.evaluate(tool("y")).ruleId).toBe("a");
  });

  it("require_approval: approval defaults, durations in ms", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: r1\n    when: {target: a}\n    then: {decision: require_approval}\n" +
        "  - id: r2\n    when: {target: b}\n    then:\n      decision: require_approval\n" +
        "      approval_config: {approvers: [x, y], timeout: 1h30m, message: please}\n",
    );
    expect(p.evaluate(tool("a")).approval).toEqual({ approvers: [] });
    expect(p.evaluate(tool("b")).approval).toEqual({
      approvers: ["x", "y"],
      timeoutMs: 5_400_000,
      message: "please",
    });
  });

  it("rate_limit: defaults, max_wait, and max_calls 0 = no limit", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: a\n    when: {target: a}\n    then: {decision: allow, rate_limit: {max_calls: 30, window: 1m}}\n" +
        "  - id: b\n    when: {target: b}\n    then:\n      decision: deny\n      rate_limit:\n" +
        "        {max_calls: 2, window: 1.5s, per_what: global, max_wait: 2m, on_limiter_error: deny}\n" +
        "  - id: c\n    when: {target: c}\n    then: {decision: allow, rate_limit: {max_calls: 0}}\n",
    );
    expect(p.evaluate(tool("a")).rateLimit).toEqual({
      maxCalls: 30,
      windowMs: 60_000,
      perWhat: "execution",
      onLimiterError: "allow",
    });
    expect(p.evaluate(tool("b")).rateLimit).toEqual({
      maxCalls: 2,
      windowMs: 1500,
      perWhat: "global",
      maxWaitMs: 120_000,
      onLimiterError: "deny",
    });
    expect(p.evaluate(tool("c"))).not.toHaveProperty("rateLimit");
  });

  it("budget: only on allow rules; on_exceed defaults to deny", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: a\n    when: {target: a}\n    then: {decision: allow, budget: {max_tokens: 150000}}\n" +
        "  - id: b\n    when: {target: b}\n    then: {decision: allow, budget: {max_tokens: 5, on_exceed: require_approval}}\n" +
        "  - id: c\n    when: {target: c}\n    then: {decision: deny, budget: {max_tokens: 5}}\n",
    );
    expect(p.evaluate(tool("a")).budget).toEqual({ maxTokens: 150_000, onExceed: "deny" });
    expect(p.evaluate(tool("b")).budget).toEqual({ maxTokens: 5, onExceed: "require_approval" });
    expect(p.evaluate(tool("c"))).not.toHaveProperty("budget");
  });

  it("judge rules with an endpoint: defaults and explicit settings", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: a\n    when: {target: a}\n    then: {decision: judge}\n" +
        "  - id: b\n    when: {target: b}\n    then:\n      decision: judge\n" +
        "      judge: {instructions: be careful, threshold: 0.9, fallback: deny}\n" +
        "      approval_config: {approvers: [ops]}\n",
      JUDGE,
    );
    expect(p.evaluate(tool("a"))).toEqual({
      decision: "judge",
      ruleId: "a",
      judge: { threshold: 0.6, fallback: "require_approval" },
    });
    expect(p.evaluate(tool("b"))).toEqual({
      decision: "judge",
      ruleId: "b",
      judge: { instructions: "be careful", threshold: 0.9, fallback: "deny" },
      approval: { approvers: ["ops"] },
    });
  });

  it("results are fresh objects: mutating one does not affect the next evaluation", () => {
    const p = compilePolicyBundle(
      "rules:\n  - id: r\n    then: {decision: require_approval, approval_config: {approvers: [a]}}\n",
    );
    p.evaluate(tool("x")).approval?.approvers.push("mallory");
    expect(p.evaluate(tool("x")).approval?.approvers).toEqual(["a"]);
  });

  it("the spec's example bundles compile (docs/protocol.md §9.9)", () => {
    const support = `default_action: deny
rules:
  - id: models
    when: { step_kind: llm_call }
    then:
      decision: allow
      budget: { max_tokens: 150000, on_exceed: require_approval }
  - id: lookups
    when: { targets: ["kb_search", "order_get", "order_list*"] }
    then:
      decision: allow
      rate_limit: { max_calls: 30, window: 1m, max_wait: 2m }
  - id: big-refund
    when:
      target: refund_issue
      arguments:
        amount_band: { one_of: ["large", "unknown"] }
    then:
      decision: require_approval
      reason: large refunds are reviewed
      approval_config: { approvers: ["finance-oncall"], timeout: 30m }
  - id: small-refund
    when: { target: refund_issue }
    then: { decision: allow }
`;
    const p = compilePolicyBundle(support);
    expect(p.evaluate(tool("order_list_recent")).ruleId).toBe("lookups");
    expect(p.evaluate(tool("refund_issue", { amount_band: "large" })).decision).toBe("require_approval");
    expect(p.evaluate(tool("refund_issue", { amount_band: "small" })).ruleId).toBe("small-refund");
    expect(p.evaluate(tool("delete_account")).ruleId).toBe("default");

    const sandbox = `default_action: allow
rules:
  - id: no-prod-writes
    when:
      target: "db/*"
      arguments:
        dsn: { contains: "prod" }
    then: { decision: deny, reason: production databases are off limits }
`;
    const s = compilePolicyBundle(sandbox);
    expect(s.evaluate(tool("db/main/write", { dsn: "pg://prod-1" }))).toEqual({
      decision: "deny",
      ruleId: "no-prod-writes",
      reason: "production databases are off limits",
    });
    expect(s.evaluate(tool("db/main/write", { dsn: "pg://staging" })).ruleId).toBe("default");
  });
});
