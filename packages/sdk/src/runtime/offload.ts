/**
 * `offload()`: run CPU-bound work on a worker thread so the event loop — and with it the lease
 * heartbeat — keeps running. Only the pure computation moves; keep tool calls
 * and steps on the main thread.
 */
import { Worker } from "node:worker_threads";
import { normalizeJson, RebunoError } from "@rebuno/protocol";
import { frames } from "./context.js";

// Runs as a CommonJS script in the worker: import() loads ES modules, eval rebuilds a function
// from its source text.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  let fn;
  if (workerData.source !== undefined) {
    fn = (0, eval)("(" + workerData.source + ")");
  } else {
    const mod = await import(workerData.moduleUrl);
    fn = mod[workerData.exportName];
    if (typeof fn !== "function") {
      throw new TypeError("offload: " + workerData.moduleUrl + " has no exported function " + workerData.exportName);
    }
  }
  return await fn(workerData.input);
})().then(
  (value) => parentPort.postMessage({ ok: true, value }),
  (error) => parentPort.postMessage({
    ok: false,
    name: (error && error.name) || "Error",
    message: (error && error.message) || String(error),
  }),
);
`;

/** Options of {@link offload}. */
export interface OffloadOptions {
  /** Aborts the worker; defaults to the active execution's signal (lease loss, supersede, close). */
  readonly signal?: AbortSignal;
  /** Worker heap limit, in MB. */
  readonly maxOldGenerationSizeMb?: number;
}

/** A function that can run on its own: it may not use variables from the enclosing scope. */
export type OffloadFunction<I, O> = (input: I) => O | Promise<O>;

/**
 * Runs `fn(input)` on a worker thread and resolves with its strict-JSON result.
 *
 * Two forms:
 * - `offload(fn, input)`: `fn` is sent as source text, so it must be self-contained (no closure
 *   variables, no imports — use `await import()` inside it if needed);
 * - `offload(moduleUrl, exportName, input)`: loads an ES module in the worker and calls the
 *   named export (the robust form for real code; pass `new URL("./work.js", import.meta.url)`).
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { offload } from "@rebuno/sdk";
 *
 * const digest = await offload((n: number) => {
 *   let h = 0;
 *   for (let i = 0; i < n; i++) h = (h * 31 + i) | 0;
 *   return h;
 * }, 1e6);
 * // The module form, for real code: offload(new URL("./report.js", import.meta.url), "buildReport", rows)
 * ```
 */
export function offload<I, O>(fn: OffloadFunction<I, O>, input: I, options?: OffloadOptions): Promise<O>;
export function offload<O = unknown>(
  moduleUrl: URL | string,
  exportName: string,
  input: unknown,
  options?: OffloadOptions,
): Promise<O>;
export function offload(a: unknown, b: unknown, c?: unknown, d?: unknown): Promise<unknown> {
  let workerData: Record<string, unknown>;
  let options: OffloadOptions | undefined;
  if (typeof a === "function") {
    workerData = { source: a.toString(), input: b };
    options = c as OffloadOptions | undefined;
  } else if ((typeof a === "string" || a instanceof URL) && typeof b === "string") {
    workerData = { moduleUrl: String(a), exportName: b, input: c };
    options = d as OffloadOptions | undefined;
  } else {
    return Promise.reject(new TypeError("offload(fn, input) or offload(moduleUrl, exportName, input)"));
  }
  const signal = options?.signal ?? frames.getStore()?.ctx.signal;
  return new Promise<unknown>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData,
      ...(options?.maxOldGenerationSizeMb === undefined
        ? {}
        : { resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb } }),
    });
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      void worker.terminate();
      fn();
    };
    worker.once("message", (message: { ok: boolean; value?: unknown; name?: string; message?: string }) => {
      finish(() => {
        if (!message.ok) {
          const error = new Error(message.message ?? "offloaded work failed");
          error.name = message.name ?? "Error";
          reject(error);
          return;
        }
        try {
          resolve(normalizeJson(message.value ?? null, "result"));
        } catch (error) {
          reject(error);
        }
      });
    });
    worker.once("error", (error) => finish(() => reject(error)));
    worker.once("exit", (code) =>
      finish(() => reject(new RebunoError(`offloaded work exited with code ${code} before answering`))),
    );
  });
}
