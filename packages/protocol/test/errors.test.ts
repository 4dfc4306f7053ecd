import { describe, expect, it } from "vitest";
import {
  Blocked,
  ConfigurationError,
  ConflictError,
  ERROR_CODE_CLASSES,
  errorFromEnvelope,
  ForbiddenError,
  failureReason,
  InternalError,
  KernelError,
  LeaseSuperseded,
  NetworkError,
  NotFoundError,
  PolicyError,
  RateLimited,
  RebunoError,
  Terminated,
  TimeoutError,
  ToolError,
  TransportError,
  UnauthorizedError,
  ValidationError,
} from "../src/index.js";

// Pinned: changing a row is a consumer-visible change.
const WIRE_CODES = [
  ["validation_error", 400, ValidationError, "validation error: missing dispatch lease"],
  ["unauthorized", 401, UnauthorizedError, "unauthorized"],
  ["forbidden", 403, ForbiddenError, 'forbidden: "carol" is not an approver for this approval'],
  ["not_found", 404, NotFoundError, "not found"],
  ["conflict", 409, ConflictError, "conflict: the parent step is in status succeeded"],
  ["lease_superseded", 409, LeaseSuperseded, "dispatch lease superseded"],
  ["execution_terminal", 409, Terminated, "execution terminal"],
  ["policy_denied", 403, PolicyError, "force pushes are not allowed"],
  ["internal_error", 500, InternalError, "boom"],
  ["unknown", 418, KernelError, "teapot"],
] as const;

const DEFAULT_MESSAGES = [
  [ValidationError, "validation error", 400, "validation_error"],
  [UnauthorizedError, "unauthorized", 401, "unauthorized"],
  [ForbiddenError, "forbidden", 403, "forbidden"],
  [NotFoundError, "not found", 404, "not_found"],
  [ConflictError, "conflict", 409, "conflict"],
  [LeaseSuperseded, "dispatch lease superseded", 409, "lease_superseded"],
  [Terminated, "execution is terminal", 409, "execution_terminal"],
  [PolicyError, "policy_denied", 403, "policy_denied"],
  [InternalError, "internal error", 500, "internal_error"],
] as const;

describe("errorFromEnvelope", () => {
  it.each(WIRE_CODES)("%s → %i %o", (code, status, cls, message) => {
    const err = errorFromEnvelope(status, { code, message });
    expect(err).toBeInstanceOf(cls);
    expect(err.constructor).toBe(cls);
    expect(err.code).toBe(code);
    expect(err.status).toBe(status);
    expect(err.message).toBe(message);
    expect(err.name).toBe(cls.name);
    expect(err.retryable).toBe(status >= 500);
    expect(KernelError.isInstance(err)).toBe(true);
    expect(RebunoError.isInstance(err)).toBe(true);
  });

  it("covers every code in ERROR_CODE_CLASSES", () => {
    const pinned = WIRE_CODES.map(([c]) => c).filter((c) => c !== "unknown");
    expect(Object.keys(ERROR_CODE_CLASSES).sort()).toEqual([...pinned].sort());
  });

  it.each(DEFAULT_MESSAGES)("%o default message %s", (cls, message, status, code) => {
    const err = new cls();
    expect(err.message).toBe(message);
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
  });

  it("accepts the raw text body and keeps details", () => {
    const err = errorFromEnvelope(409, '{"code":"conflict","message":"conflict: x","details":"more"}');
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.details).toBe("more");
  });

  it("classifies envelope-less answers by status", () => {
    expect(errorFromEnvelope(502, undefined, "<html>Bad Gateway</html>")).toBeInstanceOf(InternalError);
    expect(errorFromEnvelope(502, undefined, "<html>Bad Gateway</html>").message).toBe(
      "<html>Bad Gateway</html>",
    );
    expect(errorFromEnvelope(503, "").message).toBe("HTTP 503");
    expect(errorFromEnvelope(404, null)).toBeInstanceOf(NotFoundError);
    const teapot = errorFromEnvelope(418, { message: "short and stout" });
    expect(teapot.constructor).toBe(KernelError);
    expect(teapot.code).toBe("unknown");
    expect(teapot.message).toBe("short and stout");
  });

  it("keeps an unknown code as-is on a plain KernelError", () => {
    const err = errorFromEnvelope(422, { code: "brand_new", message: "m" });
    expect(err.constructor).toBe(KernelError);
    expect(err.code).toBe("brand_new");
    expect(err.retryable).toBe(false);
    expect(errorFromEnvelope(503, { code: "overloaded", message: "m" }).retryable).toBe(true);
  });

  it("falls back to the class default when the envelope has no message", () => {
    expect(errorFromEnvelope(409, { code: "lease_superseded" }).message).toBe("dispatch lease superseded");
    expect(errorFromEnvelope(409, { code: "lease_superseded" }, "").message).toBe(
      "dispatch lease superseded",
    );
    expect(errorFromEnvelope(409, { code: "execution_terminal", message: "" }).message).toBe(
      "execution is terminal",
    );
    expect(errorFromEnvelope(409, { code: "odd" }).message).toBe("HTTP 409");
  });

  it("reads rule_id for policy_denied", () => {
    const err = errorFromEnvelope(403, { code: "policy_denied", message: "nope", rule_id: "r1" });
    expect(err).toBeInstanceOf(PolicyError);
    expect((err as PolicyError).ruleId).toBe("r1");
    expect((err as PolicyError).reason).toBe("nope");
  });
});

describe("error family", () => {
  it("sets names, codes and retryable", () => {
    const cases: [RebunoError, string, string, boolean][] = [
      [new RebunoError("x"), "RebunoError", "rebuno_error", false],
      [new RateLimited(), "RateLimited", "rate_limited", false],
      [new Blocked(), "Blocked", "blocked", false],
      [new TransportError("x"), "TransportError", "transport_error", true],
      [new NetworkError(), "NetworkError", "network_error", true],
      [new TimeoutError(), "TimeoutError", "timeout", true],
      [new ToolError("x"), "ToolError", "tool_error", false],
      [new ConfigurationError("x"), "ConfigurationError", "configuration_error", false],
      [new InternalError(), "InternalError", "internal_error", true],
      [new ValidationError(), "ValidationError", "validation_error", false],
    ];
    for (const [err, name, code, retryable] of cases) {
      expect(err.name).toBe(name);
      expect(err.code).toBe(code);
      expect(err.retryable).toBe(retryable);
      expect(String(err)).toMatch(new RegExp(`^${name}: `));
      expect(err.stack?.split("\n")[0]).toMatch(new RegExp(`^${name}: `));
      expect(err).toBeInstanceOf(Error);
    }
  });

  it("has the documented defaults", () => {
    expect(new RateLimited().reason).toBe("rate_limit_exceeded");
    expect(new RateLimited().message).toBe("rate_limit_exceeded");
    expect(new RateLimited("rate_limiter_unavailable").reason).toBe("rate_limiter_unavailable");
    const blocked = new Blocked(undefined, { approvalId: "a1", reason: "awaiting_steps" });
    expect(blocked.message).toBe("step blocked");
    expect(blocked.approvalId).toBe("a1");
    expect(blocked.reason).toBe("awaiting_steps");
    expect(new ToolError("boom", { toolId: "search", stepId: "s1" }).message).toBe("search: boom");
    expect(new ToolError("boom").message).toBe("boom");
    expect(new ToolError("boom", { toolId: "search" }).toolId).toBe("search");
    const v = new ValidationError("bad", { issues: [{ path: ["a", 0], message: "m" }] });
    expect(v.issues).toHaveLength(1);
    expect(new ValidationError().issues).toEqual([]);
  });

  it("chains cause", () => {
    const cause = new Error("socket hang up");
    const err = new NetworkError("fetch failed", { cause });
    expect(err.cause).toBe(cause);
    expect(new NetworkError().cause).toBeUndefined();
  });

  it("recognises instances from another copy of the package", () => {
    // Simulate a duplicate install: same names and brand, different classes.
    const brand = Symbol.for("rebuno.error");
    class OtherBase extends Error {}
    Object.defineProperty(OtherBase.prototype, brand, { value: true });
    OtherBase.prototype.name = "RebunoError";
    class OtherKernel extends OtherBase {}
    OtherKernel.prototype.name = "KernelError";
    class OtherLease extends OtherKernel {}
    OtherLease.prototype.name = "LeaseSuperseded";
    const foreign = new OtherLease("dispatch lease superseded");

    expect(LeaseSuperseded.isInstance(foreign)).toBe(true);
    expect(foreign instanceof LeaseSuperseded).toBe(true);
    expect(foreign instanceof KernelError).toBe(true);
    expect(RebunoError.isInstance(foreign)).toBe(true);
    expect(Terminated.isInstance(foreign)).toBe(false);
    expect(foreign instanceof Terminated).toBe(false);
    expect(RebunoError.isInstance(new Error("x"))).toBe(false);
    expect(RebunoError.isInstance("x")).toBe(false);
    expect(new Error("x") instanceof RebunoError).toBe(false);
  });

  it("keeps subclasses of family members recognisable", () => {
    class InputInvalid extends ValidationError {}
    const err = new InputInvalid("bad input");
    expect(ValidationError.isInstance(err)).toBe(true);
    expect(err instanceof KernelError).toBe(true);
    expect(ConflictError.isInstance(err)).toBe(false);
  });
});

describe("failureReason (F45)", () => {
  it.each([
    [
      new PolicyError("force pushes are not allowed", { ruleId: "r" }),
      "policy_denied: force pushes are not allowed",
    ],
    [new PolicyError("execution_token_budget_exceeded"), "execution_token_budget_exceeded"],
    [new PolicyError("approval_timeout"), "approval_timeout"],
    [new PolicyError("approval_denied"), "approval_denied"],
    [new PolicyError(), "policy_denied"],
    [
      new PolicyError("prior attempt outcome unknown; retry refused"),
      "policy_denied: prior attempt outcome unknown; retry refused",
    ],
    [new PolicyError("Needs Review"), "policy_denied: Needs Review"],
    [new RateLimited(), "rate_limit_exceeded"],
    [new RateLimited("rate_limiter_unavailable"), "rate_limiter_unavailable"],
    [new ToolError("boom", { toolId: "search" }), "tool_error: search: boom"],
    [
      new ToolError(
        "outcome unknown: this may already have taken effect. Check the state before continuing.",
        {
          toolId: "charge",
        },
      ),
      "tool_error: charge: outcome unknown: this may already have taken effect. Check the state before continuing.",
    ],
    [new TypeError("x is not a function"), "agent_error: TypeError: x is not a function"],
    [new Error("plain"), "agent_error: Error: plain"],
    [new ConflictError("conflict: x"), "agent_error: ConflictError: conflict: x"],
    ["a string", "agent_error: NonError: a string"],
    [{ weird: true }, 'agent_error: NonError: {"weird":true}'],
  ] as const)("%o → %s", (err, expected) => {
    expect(failureReason(err)).toBe(expected);
  });

  it("names subclasses that do not set name", () => {
    class QuotaExceeded extends Error {}
    expect(failureReason(new QuotaExceeded("over"))).toBe("agent_error: QuotaExceeded: over");
  });
});
