/**
 * A small hand-written router: routes are path templates with `:uuid` (validated, lowercased) and
 * `:name` (any percent-decoded segment) parameters. A path that matches with another method
 * answers 405 with `Allow`.
 */
import type { KernelContext } from "../engine/context.js";
import { invalid } from "../errors.js";
import { parseUuid } from "../ids.js";
import type { AuthClass, Caller } from "./auth.js";
import type { CoreRequest, CoreResponse } from "./types.js";

/** What a handler receives. */
export interface RouteInput {
  readonly req: CoreRequest;
  /** Path parameters in template order (`:uuid` ones lowercased). */
  readonly params: readonly string[];
  readonly query: URLSearchParams;
  readonly caller: Caller;
}

/** A route handler. Synchronous handlers avoid a promise hop on hot paths. */
export type RouteHandler = (ctx: KernelContext, input: RouteInput) => CoreResponse | Promise<CoreResponse>;

/** One route. */
export interface Route {
  readonly method: string;
  /** Template such as `/v0/executions/:uuid/steps/:name/complete`. */
  readonly path: string;
  readonly auth: AuthClass;
  /** Scopes a bearer caller needs (all of them). */
  readonly scopes?: readonly string[];
  readonly handler: RouteHandler;
}

interface CompiledRoute {
  readonly route: Route;
  readonly segments: readonly string[];
}

/** Result of {@link Router.match}. */
export type RouteMatch =
  | { readonly kind: "found"; readonly route: Route; readonly params: string[] }
  | { readonly kind: "method_not_allowed"; readonly allow: readonly string[] }
  | { readonly kind: "not_found" };

/** Matches request paths against the route table. */
export class Router {
  private readonly byLength = new Map<number, CompiledRoute[]>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const segments = route.path.split("/").slice(1);
      const list = this.byLength.get(segments.length) ?? [];
      list.push({ route, segments });
      this.byLength.set(segments.length, list);
    }
  }

  /** Match an escaped path (no query). Bad percent-escapes or ids → 400. */
  match(method: string, path: string): RouteMatch {
    const raw = path.split("/").slice(1);
    const candidates = this.byLength.get(raw.length);
    if (candidates === undefined) return { kind: "not_found" };
    let allow: string[] | undefined;
    let badUuid: string | undefined;
    for (const c of candidates) {
      const params = matchSegments(c.segments, raw);
      if (params === undefined) continue;
      if (typeof params === "string") {
        badUuid ??= params;
        continue;
      }
      if (c.route.method === method) return { kind: "found", route: c.route, params };
      (allow ??= []).push(c.route.method);
    }
    if (allow !== undefined) return { kind: "method_not_allowed", allow };
    if (badUuid !== undefined) throw invalid(`invalid id ${JSON.stringify(badUuid)}: not a UUID`);
    return { kind: "not_found" };
  }
}

function decode(segment: string): string | undefined {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

// Params on success; the offending text when a `:uuid` segment is not a UUID; undefined otherwise.
function matchSegments(template: readonly string[], raw: readonly string[]): string[] | string | undefined {
  const params: string[] = [];
  let badUuid: string | undefined;
  for (let i = 0; i < template.length; i++) {
    const t = template[i]!;
    const seg = raw[i]!;
    if (t.charCodeAt(0) !== 0x3a /* : */) {
      if (t !== seg) return undefined;
      continue;
    }
    const value = decode(seg);
    if (value === undefined || value === "") return undefined;
    if (t === ":uuid") {
      const id = parseUuid(value);
      if (id === undefined) {
        badUuid ??= value;
        params.push(value);
        continue;
      }
      params.push(id);
    } else {
      params.push(value);
    }
  }
  return badUuid ?? params;
}
