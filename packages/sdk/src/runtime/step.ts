/**
 * `step()`: record a piece of local non-determinism (the clock, randomness, a fresh id, a read
 * you want pinned) so a rerun replays the first value instead of computing a new one.
 */

import { type CallSpec, checkIdempotency, checkResources } from "../tool-spec.js";
import type { Idempotency } from "../tool-types.js";
import { type CallBody, runCall } from "./call.js";
import { frames, OUTSIDE_HINT } from "./context.js";

/** Options of {@link step}. */
export interface StepOptions {
  /** Default `safe_to_retry`. */
  readonly idempotency?: Idempotency | undefined;
  /** Registered resource keys this step may change. */
  readonly resources?: readonly string[] | undefined;
}

// Specs are immutable, so the common shapes are cached instead of built per call.
const specCache = new Map<string, CallSpec>();
const EMPTY_ARGS: Readonly<Record<string, never>> = Object.freeze({});

function specFor(name: string, options: StepOptions | undefined): CallSpec {
  const idempotency = checkIdempotency(options?.idempotency, `step("${name}")`);
  if (options?.resources !== undefined && options.resources.length > 0) {
    return {
      kind: "local",
      target: name,
      idempotency,
      resources: checkResources(options.resources, `step("${name}")`),
    };
  }
  const key = `${idempotency}\u0000${name}`;
  let spec = specCache.get(key);
  if (spec === undefined) {
    spec = Object.freeze({ kind: "local", target: name, idempotency, resources: [] as readonly string[] });
    if (specCache.size < 10_000) specCache.set(key, spec);
  }
  return spec;
}

/**
 * Runs `fn(args)` as a recorded `local` step named `name`. On a rerun the recorded value comes
 * back without calling `fn`. The result must be strict JSON; the first run returns the same
 * JSON-normalized value a replay returns.
 *
 * A denied step throws `PolicyError` (unlike tools, which return a string); a failing `fn`
 * throws `ToolError` after the failure is recorded.
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { randomUUID } from "node:crypto";
 * import { step } from "@rebuno/sdk";
 *
 * const startedAt = await step("now", () => new Date().toISOString());
 * const id = await step("order-id", ({ prefix }) => `${prefix}-${randomUUID()}`, { prefix: "ord" });
 * ```
 */
export function step<T, A extends object = Record<string, never>>(
  name: string,
  fn: (args: A) => T | Promise<T>,
  args?: A,
  options?: StepOptions | Idempotency,
  resources?: readonly string[],
): Promise<Awaited<T>> {
  // The official SDK's positional form `step(name, fn, args, idempotency, resources)` maps onto
  // the options object; read as an object, the string would silently mean `safe_to_retry`.
  if (typeof options === "string") options = { idempotency: options, resources };
  else if (resources !== undefined) options = { ...options, resources };
  const frame = frames.getStore();
  if (frame === undefined) {
    return Promise.reject(
      new Error(`rebuno step('${name}') called outside an active execution. ${OUTSIDE_HINT}`),
    );
  }
  return runCall(frame, specFor(name, options), args ?? EMPTY_ARGS, fn as CallBody, undefined) as Promise<
    Awaited<T>
  >;
}
