/**
 * A small hand-written router: routes are path templates with `:uuid` (validated, lowercased) and
 * `:name` (any percent-decoded segment) parameters. A path that matches with another method
 * answers 405 with `Allow`.
 *
 * Matching runs on every request, so it works on the path in place: segment boundaries are found
 * once per request, literal segments are compared with `startsWith` at their offset (no substring
 * per segment), and a parameter segment is sliced, decoded and UUID-checked at most once per
 * request however many candidate routes share it.
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

const LITERAL = 0;
const UUID = 1;
const NAME = 2;

interface CompiledRoute {
  readonly route: Route;
  /** Per segment: LITERAL, UUID or NAME. */
  readonly kinds: readonly number[];
  /** Per segment: the literal text ("" for parameters). */
  readonly literals: readonly string[];
  /** Indexes of the literal segments, last first: routes mostly differ in their last segment. */
  readonly literalOrder: readonly number[];
}

/** Result of {@link Router.match}. */
export type RouteMatch =
  | { readonly kind: "found"; readonly route: Route; readonly params: string[] }
  | { readonly kind: "method_not_allowed"; readonly allow: readonly string[] }
  | { readonly kind: "not_found" };

const NOT_FOUND: RouteMatch = Object.freeze({ kind: "not_found" });

// Per-request scratch, reset by `match` (which is synchronous, so one set per router suffices).
// A parameter segment's state: NOT_READ, or DECODE_FAILED, or the decoded text in `decoded`
// (and in `uuid` its canonical UUID form, or undefined when it is not a UUID).
const NOT_READ = 0;
const DECODE_FAILED = 1;
const DECODED = 2;

/**
 * The routes with one segment count. A route whose last segment is a literal can only match a path
 * ending in that literal, so each literal keys the routes that could match (those with that
 * literal or a parameter last, in table order); `paramLast` serves any other last segment.
 */
interface SameLength {
  readonly byLastLiteral: Map<string, CompiledRoute[]>;
  readonly paramLast: CompiledRoute[];
}

/** Matches request paths against the route table. */
export class Router {
  private readonly byLength = new Map<number, SameLength>();
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly state: number[] = [];
  private readonly decoded: string[] = [];
  private readonly uuid: (string | undefined)[] = [];

  constructor(routes: readonly Route[]) {
    const lists = new Map<number, CompiledRoute[]>();
    for (const route of routes) {
      const segments = route.path.split("/").slice(1);
      const kinds = segments.map((s) => (s === ":uuid" ? UUID : s.startsWith(":") ? NAME : LITERAL));
      const literals = segments.map((s, i) => (kinds[i] === LITERAL ? s : ""));
      const literalOrder = kinds.flatMap((k, i) => (k === LITERAL ? [i] : [])).reverse();
      const list = lists.get(segments.length) ?? [];
      list.push({ route, kinds, literals, literalOrder });
      lists.set(segments.length, list);
    }
    for (const [n, list] of lists) {
      const last = (c: CompiledRoute): string | undefined =>
        c.kinds[n - 1] === LITERAL ? c.literals[n - 1] : undefined;
      const byLastLiteral = new Map<string, CompiledRoute[]>();
      for (const c of list) {
        const lit = last(c);
        if (lit !== undefined && !byLastLiteral.has(lit)) {
          byLastLiteral.set(
            lit,
            list.filter((d) => last(d) === lit || last(d) === undefined),
          );
        }
      }
      this.byLength.set(n, { byLastLiteral, paramLast: list.filter((d) => last(d) === undefined) });
    }
  }

  /** Match an escaped path (no query). Bad percent-escapes or ids → 400. */
  match(method: string, path: string): RouteMatch {
    // Segments are what `path.split("/").slice(1)` gives: everything after the first "/".
    const first = path.indexOf("/");
    if (first < 0) return NOT_FOUND;
    const { starts, ends, state } = this;
    let n = 0;
    for (let start = first + 1; ; n++) {
      const slash = path.indexOf("/", start);
      starts[n] = start;
      state[n] = NOT_READ;
      if (slash < 0) {
        ends[n] = path.length;
        n++;
        break;
      }
      ends[n] = slash;
      start = slash + 1;
    }
    const sameLength = this.byLength.get(n);
    if (sameLength === undefined) return NOT_FOUND;
    const candidates =
      sameLength.byLastLiteral.get(path.slice(starts[n - 1]!, ends[n - 1]!)) ?? sameLength.paramLast;
    let allow: string[] | undefined;
    let badUuid: string | undefined;
    for (const c of candidates) {
      if (!this.literalsMatch(c, path)) continue;
      const params = this.params(c, path, n);
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
    return NOT_FOUND;
  }

  private literalsMatch(c: CompiledRoute, path: string): boolean {
    for (const i of c.literalOrder) {
      const lit = c.literals[i]!;
      const start = this.starts[i]!;
      if (this.ends[i]! - start !== lit.length || !path.startsWith(lit, start)) return false;
    }
    return true;
  }

  // Params on success; the first offending text when a `:uuid` segment is not a UUID; undefined
  // when a parameter segment is empty or badly escaped (the route does not match).
  private params(c: CompiledRoute, path: string, n: number): string[] | string | undefined {
    const params: string[] = [];
    let badUuid: string | undefined;
    for (let i = 0; i < n; i++) {
      const kind = c.kinds[i]!;
      if (kind === LITERAL) continue;
      if (this.read(path, i) === DECODE_FAILED) return undefined;
      const value = this.decoded[i]!;
      if (kind === NAME) {
        params.push(value);
        continue;
      }
      const id = this.uuid[i];
      if (id === undefined) {
        badUuid ??= value;
        params.push(value);
      } else {
        params.push(id);
      }
    }
    return badUuid ?? params;
  }

  private read(path: string, i: number): number {
    const s = this.state[i]!;
    if (s !== NOT_READ) return s;
    const value = decode(path.slice(this.starts[i]!, this.ends[i]!));
    if (value === undefined || value === "") {
      this.state[i] = DECODE_FAILED;
      return DECODE_FAILED;
    }
    this.decoded[i] = value;
    this.uuid[i] = parseUuid(value);
    this.state[i] = DECODED;
    return DECODED;
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
