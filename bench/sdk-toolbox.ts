// The decorated toolbox bench/sdk.mjs and bench/micro.mjs measure: the `@tool` path is what users
// write, so it is the one the headline figures use. Loaded through tsx (esbuild lowers the TC39
// decorators for Node 20), never through a separate build step.
import { Toolbox, tool } from "@rebuno/sdk";

export interface NoopArgs {
  readonly n: number;
}

/** The argument object's schema: a tool that takes arguments must declare one (what LLMs see). */
const NOOP_INPUT = { type: "object", properties: { n: { type: "number" } }, required: ["n"] } as const;

/** The body both tools run: the cheapest thing a real tool could do. */
export async function noopBody(args: NoopArgs): Promise<{ ok: true; n: number }> {
  return { ok: true, n: args.n };
}

export class BenchTools extends Toolbox {
  /** B1: the default guarantee (`safe_to_retry`). */
  @tool("noop", { description: "does nothing", input: NOOP_INPUT })
  async noop(args: NoopArgs) {
    return noopBody(args);
  }

  /** B2: the stronger guarantee; the kernel marks the step executing before `proceed`. */
  @tool("noop_once", {
    description: "does nothing, at most once",
    idempotency: "at_most_once",
    input: NOOP_INPUT,
  })
  async noopOnce(args: NoopArgs) {
    return noopBody(args);
  }
}

/**
 * B10 guard: a toolbox whose input schemas are supplied by the caller (wrapped to count JSON
 * Schema conversions), so the bench can check that conversion happens once per tool.
 */
export function makeSchemaToolbox(a: object, b: object) {
  class SchemaTools extends Toolbox {
    @tool("lookup", { input: a as never })
    async lookup(args: { sku: string }) {
      return { sku: args.sku, qty: 1 };
    }

    @tool("reserve", { input: b as never, idempotency: "at_most_once" })
    async reserve(args: { sku: string; qty: number }) {
      return { sku: args.sku, reserved: args.qty };
    }
  }
  return SchemaTools;
}
