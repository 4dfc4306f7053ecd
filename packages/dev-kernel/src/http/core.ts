/**
 * The transport-neutral kernel core: route, authenticate, run the handler, and turn every
 * failure into the error envelope. Nothing thrown by a handler can crash the process or escape
 * as a non-JSON answer; unexpected errors become `500 internal_error` and are reported (a damaged
 * row of the SQLite store: `500 store_corrupt` naming it).
 */
import { KernelError, parseJsonObjectWithRaw } from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { invalid, methodNotAllowed, notFound } from "../errors.js";
import { MAX_JSON_DEPTH } from "../inferences.js";
import type { CounterSeries } from "../metrics.js";
import { StoreRowCorruptError } from "../store/sqlite-json.js";
import { traceRequest } from "../tracing.js";
import { authenticate } from "./auth.js";
import { errorResponse } from "./respond.js";
import type { Route, RouteInput } from "./router.js";
import { Router } from "./router.js";
import type { CoreHandler, CoreRequest, CoreResponse } from "./types.js";

const EMPTY_QUERY = new URLSearchParams();

/** Build the core handler over a route table. */
export function createCoreHandler(ctx: KernelContext, routes: readonly Route[]): CoreHandler {
  const router = new Router(routes);
  // `rebuno_http_requests_total{code}` series by status, so counting an answer is an array read.
  const byStatus: CounterSeries[] = [];
  const count = (status: number): void => {
    let s = byStatus[status];
    if (s === undefined) {
      s = ctx.metrics.series("rebuno_http_requests_total", ["code", String(status)]);
      byStatus[status] = s;
    }
    s.value++;
  };
  return async (req: CoreRequest): Promise<CoreResponse> => {
    let response: CoreResponse;
    try {
      const q = req.target.indexOf("?");
      const path = q < 0 ? req.target : req.target.slice(0, q);
      const match = router.match(req.method, path);
      if (match.kind === "not_found") throw notFound("no route for this path");
      if (match.kind === "method_not_allowed") {
        response = errorResponse(methodNotAllowed(), { allow: match.allow.join(", ") });
      } else {
        const { route } = match;
        const caller = authenticate(ctx, req, route.auth, route.scopes ?? NO_SCOPES);
        const input: RouteInput = {
          req,
          params: match.params,
          query: q < 0 ? EMPTY_QUERY : new URLSearchParams(req.target.slice(q + 1)),
          caller,
        };
        // Most handlers answer synchronously: no await (and no extra microtask) for them.
        const answer = traceRequest(req.method, path, route.path, route.handler, ctx, input);
        response = answer instanceof Promise ? await answer : answer;
      }
    } catch (err) {
      response = toErrorResponse(ctx, err);
    }
    // Durability fence: no answer leaves before the writes it could reflect are committed (the
    // SQLite store group-commits at the end of the event-loop turn). Both adapters and
    // `kernel.handle` go through here, so none of them can acknowledge a write that a SIGKILL
    // would lose. Error answers wait too: they may describe state another request just wrote.
    try {
      await ctx.store.whenDurable();
    } catch (err) {
      response = toErrorResponse(ctx, err);
    }
    count(response.status);
    return response;
  };
}

const NO_SCOPES: readonly string[] = Object.freeze([]);

function toErrorResponse(ctx: KernelContext, err: unknown): CoreResponse {
  if (KernelError.isInstance(err)) return errorResponse(err);
  ctx.reportError(err, "http");
  // A damaged row of the SQLite store (store/sqlite-json.ts): the client is told which one, the
  // file's path stays in the report.
  if (StoreRowCorruptError.isInstance(err)) {
    return errorResponse(
      new KernelError(`store corrupt: ${err.row}`, { status: 500, code: "store_corrupt", retryable: false }),
    );
  }
  return errorResponse(new KernelError("internal error", { status: 500, code: "internal_error" }));
}

/**
 * Parse a JSON object body (depth-bounded, raw text of each top-level field kept) and validate it.
 * Malformed → 400 `validation error: invalid JSON: …`.
 */
export function parseBody<T>(
  req: CoreRequest,
  validate: (value: unknown) => T,
): { readonly body: T; readonly raw: Readonly<Record<string, string>> } {
  const text = req.body;
  if (text.length === 0) throw invalid("invalid JSON: empty body");
  let parsed: ReturnType<typeof parseJsonObjectWithRaw>;
  try {
    parsed = parseJsonObjectWithRaw(text, { maxDepth: MAX_JSON_DEPTH });
  } catch (err) {
    if (KernelError.isInstance(err) && !err.message.startsWith("validation error")) {
      throw invalid(err.message);
    }
    throw err;
  }
  return { body: validate(parsed.value), raw: parsed.raw };
}
