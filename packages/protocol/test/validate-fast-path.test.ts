// `validateRequest` accepts the hot request bodies (submit, complete, fail) without zod when they
// are certainly valid. Whatever it answers must be what zod answers: the same acceptance, an
// equal value, and for anything refused the same error.
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  CompleteStepRequestSchema,
  FailStepRequestSchema,
  SubmitStepRequestSchema,
  ValidationError,
  validateRequest,
} from "../src/index.js";

function zodAnswer(
  schema: z.ZodType,
  body: unknown,
): { ok: true; value: unknown } | { ok: false; message: string } {
  const r = schema.safeParse(body);
  if (r.success) return { ok: true, value: r.data };
  try {
    // The slow path of validateRequest builds the message; reach it with a value zod refuses.
    validateRequest(schema, body);
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
  throw new Error("validateRequest accepted what zod refused");
}

function ours(
  schema: z.ZodType,
  body: unknown,
): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: validateRequest(schema, body) };
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return { ok: false, message: (err as Error).message };
  }
}

const ARGS = [undefined, null, 1, "x", [1, "a"], { to: "a@b", n: 1.5 }, { nested: { deep: [null] } }];
const KINDS = ["tool_call", "llm_call", "local", "shell", "", 1, null, undefined];
const TARGETS = ["send_email", "", 5, null, undefined, ["t"]];
const IDEMPOTENCY = [undefined, null, "safe_to_retry", "at_most_once", "once", 0];
const RESOURCES = [undefined, null, [], ["a", "b"], ["a", 1], "a", [null]];

function submitBodies(): unknown[] {
  const out: unknown[] = [null, [], "{}", 1, {}, Object.create(null)];
  for (const kind of KINDS)
    for (const target of TARGETS)
      for (const idempotency of IDEMPOTENCY)
        for (const resources of RESOURCES) {
          const body: Record<string, unknown> = {};
          if (kind !== undefined) body.kind = kind;
          if (target !== undefined) body.target = target;
          if (idempotency !== undefined) body.idempotency = idempotency;
          if (resources !== undefined) body.resources = resources;
          out.push(body);
        }
  for (const args of ARGS) out.push({ kind: "tool_call", target: "t", args });
  out.push({ kind: "local", target: "t", extra: 1 });
  out.push(JSON.parse('{"kind":"local","target":"t","__proto__":1}'));
  return out;
}

function outcomeBodies(valueKey: string): unknown[] {
  const lists = [
    undefined,
    null,
    [],
    [{ key: "k", generation: 1, checkpoint_ref: "r" }],
    [{ key: 1 }],
    {},
    "x",
  ];
  const failures = [undefined, null, [], [{ key: "k", generation: 1, error: "e" }], [{ nope: 1 }]];
  const out: unknown[] = [null, [], 1, {}, { other: 1 }, { [valueKey]: 1, x: null }];
  for (const value of ARGS)
    for (const captures of lists)
      for (const captureFailures of failures) {
        const body: Record<string, unknown> = {};
        if (value !== undefined) body[valueKey] = value;
        if (captures !== undefined) body.captures = captures;
        if (captureFailures !== undefined) body.capture_failures = captureFailures;
        out.push(body);
      }
  return out;
}

describe("validateRequest fast path", () => {
  const cases: [string, z.ZodType, unknown[]][] = [
    ["submit", SubmitStepRequestSchema, submitBodies()],
    ["complete", CompleteStepRequestSchema, outcomeBodies("result")],
    ["fail", FailStepRequestSchema, outcomeBodies("error")],
  ];
  it.each(cases)("answers like zod for every %s body", (_name, schema, bodies) => {
    for (const body of bodies) {
      const want = zodAnswer(schema, body);
      const got = ours(schema, body);
      expect(got.ok, JSON.stringify(body)).toBe(want.ok);
      if (got.ok && want.ok) expect(got.value).toEqual(want.value);
      if (!got.ok && !want.ok) expect(got.message).toBe(want.message);
    }
  });
});
