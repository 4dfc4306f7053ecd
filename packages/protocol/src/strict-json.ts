/**
 * Strict JSON serialization for everything the SDK sends (args, results, outputs). Plain
 * `JSON.stringify` silently turns NaN into null, drops undefined array items, turns Dates into
 * strings and Maps into `{}`; a replay would then return something other than what the first run
 * saw. Here those values throw a TypeError naming the exact path instead. Rationale and the full
 * list: docs/design/strict-json.md.
 *
 * Implementation: a quick check for plain data (`isPlain`), else a validating walk that tracks the
 * path for its errors; then the native `JSON.stringify`, which is faster than any JS serializer.
 * Only values holding `RawJson` take the JS serializer.
 */
import { RawJson, rawProbe } from "./raw-json.js";

type Segment = string | number;

const IDENT = /^[A-Za-z_$][\w$]*$/;

function formatPath(root: string, segments: readonly Segment[]): string {
  let out = root;
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else if (IDENT.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

// Cycle checks start below this depth: cheap for ordinary data, and any cycle is still found
// within one cycle length past it.
const CYCLE_CHECK_DEPTH = 16;

class Walker {
  readonly path: Segment[] = [];
  readonly ancestors: object[] = [];
  hasRaw = false;
  constructor(readonly root: string) {}

  error(child: Segment | undefined, what: string): TypeError {
    const segs = child === undefined ? this.path : [...this.path, child];
    return new TypeError(`${formatPath(this.root, segs)} ${what}`);
  }

  // Report the first repeated object on the current chain (the shallowest circular reference).
  cycle(v: object): never {
    const chain = [...this.ancestors, v];
    for (let j = 1; j < chain.length; j++) {
      const k = chain.indexOf(chain[j]!);
      if (k < j) {
        const at = formatPath(this.root, this.path.slice(0, j));
        throw new TypeError(
          `${at} is a circular reference to ${formatPath(this.root, this.path.slice(0, k))}`,
        );
      }
    }
    throw new TypeError(`${formatPath(this.root, this.path)} is a circular reference`);
  }

  // Returns normally for JSON-safe primitives; objects recurse.
  check(v: unknown, child: Segment | undefined): void {
    switch (typeof v) {
      case "string":
      case "boolean":
        return;
      case "number":
        if (!Number.isFinite(v)) {
          throw this.error(child, `is ${v}; JSON has no ${v} (JSON.stringify would silently send null)`);
        }
        return;
      case "object":
        if (v === null) return;
        if (child !== undefined) this.path.push(child);
        this.object(v);
        if (child !== undefined) this.path.pop();
        return;
      case "undefined":
        throw this.error(child, "is undefined; arrays cannot hold undefined in JSON (use null)");
      case "function":
        throw this.error(child, "is a function; functions are not JSON");
      case "symbol":
        throw this.error(child, "is a symbol; symbols are not JSON");
      case "bigint":
        throw this.error(child, "is a BigInt; convert it to a string (or a number if it is safe)");
    }
  }

  object(v: object): void {
    const ancestors = this.ancestors;
    if (ancestors.length >= CYCLE_CHECK_DEPTH && ancestors.includes(v)) this.cycle(v);
    if (Array.isArray(v)) {
      ancestors.push(v);
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        // Inline the common primitive cases; `check` handles the rest.
        if (typeof item === "string" || typeof item === "boolean" || item === null) continue;
        this.check(item, i);
      }
      ancestors.pop();
      return;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null && !isForeignObjectPrototype(proto)) {
      if (RawJson.isInstance(v)) {
        this.hasRaw = true;
        return;
      }
      throw this.error(undefined, describeNonPlain(v));
    }
    ancestors.push(v);
    const rec = v as Record<string, unknown>;
    for (const key in rec) {
      if (!Object.hasOwn(rec, key)) continue;
      const item = rec[key];
      // JSON has no undefined: like JSON.stringify, an undefined property is simply omitted.
      if (typeof item === "string" || typeof item === "boolean" || item === null || item === undefined) {
        continue;
      }
      this.check(item, key);
    }
    ancestors.pop();
  }
}

// A plain object made in another realm (vm context, worker message) has that realm's
// Object.prototype: a prototype whose own prototype is null and whose constructor is "Object".
function isForeignObjectPrototype(proto: unknown): boolean {
  if (typeof proto !== "object" || proto === null || Object.getPrototypeOf(proto) !== null) return false;
  const ctor = (proto as { constructor?: { name?: unknown } }).constructor;
  return typeof ctor === "function" && ctor.name === "Object";
}

function describeNonPlain(v: object): string {
  if (v instanceof Date) {
    return "is a Date; pass date.toISOString() instead (a Date would come back from a replay as a string)";
  }
  if (v instanceof Map) return "is a Map; convert it first (e.g. Object.fromEntries(map))";
  if (v instanceof Set) return "is a Set; convert it first (e.g. [...set])";
  const ctor = (v as { constructor?: { name?: unknown } }).constructor;
  const what =
    typeof ctor?.name === "string" && ctor.name !== "" ? `an instance of ${ctor.name}` : "a non-plain object";
  return (
    `is ${what}; only plain objects, arrays, strings, finite numbers, booleans and null ` +
    "are JSON (convert it to a plain object first)"
  );
}

function validate(value: unknown, root: string): boolean {
  const walker = new Walker(root);
  try {
    walker.check(value, undefined);
  } catch (err) {
    if (err instanceof RangeError) {
      throw new TypeError(`${root} is nested too deeply to serialize as JSON`, { cause: err });
    }
    throw err;
  }
  return walker.hasRaw;
}

// Serializer for already-validated values that contain RawJson (which the native one cannot emit).
function writeValidated(v: unknown): string {
  if (typeof v !== "object" || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) out += (i > 0 ? "," : "") + writeValidated(v[i]);
    return `${out}]`;
  }
  if (RawJson.isInstance(v)) return v.text;
  let out = "{";
  let first = true;
  const rec = v as Record<string, unknown>;
  for (const key in rec) {
    if (!Object.hasOwn(rec, key)) continue;
    const item = rec[key];
    if (item === undefined) continue;
    out += `${first ? "" : ","}${JSON.stringify(key)}:${writeValidated(item)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * The common case, checked without the walker: plain objects and arrays (at most
 * {@link CYCLE_CHECK_DEPTH} deep) of strings, booleans, null and finite numbers, with no RawJson.
 * No path bookkeeping and no allocation; any doubt answers false and the walker decides, so the
 * error messages and the RawJson handling stay the walker's. Every argument and result the SDK
 * sends passes here first (two per tool call).
 */
function isPlain(v: object, depth: number): boolean {
  if (depth >= CYCLE_CHECK_DEPTH) return false; // deep values (and cycles) take the walker
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      // undefined (holes too) is not plain in an array: JSON.stringify would write null
      if (!isPlainItem(v[i], depth, false)) return false;
    }
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  const rec = v as Record<string, unknown>;
  for (const key in rec) {
    if (!Object.hasOwn(rec, key)) continue;
    // an undefined property is omitted, as JSON.stringify does
    if (!isPlainItem(rec[key], depth, true)) return false;
  }
  return true;
}

/** One array item or property value of {@link isPlain}; functions, symbols and BigInt are not. */
function isPlainItem(item: unknown, depth: number, undefinedAllowed: boolean): boolean {
  switch (typeof item) {
    case "string":
    case "boolean":
      return true;
    case "undefined":
      return undefinedAllowed;
    case "number":
      return Number.isFinite(item);
    case "object":
      return item === null || isPlain(item, depth + 1);
    default:
      return false;
  }
}

/**
 * Strict `JSON.stringify`. Throws a `TypeError` naming the path (`args.items[2].when`) for NaN and
 * ±Infinity, `undefined` array items, functions, symbols, BigInt, cycles, Dates (use
 * `toISOString()`), and non-plain objects (Map, Set, class instances, typed arrays, boxed
 * primitives). `undefined` object properties are omitted; a root `undefined` is `"null"`.
 * `RawJson` values are emitted verbatim.
 */
export function toWireJson(value: unknown, root = "value"): string {
  if (value === undefined) return "null";
  if (typeof value === "object" && value !== null) {
    if (RawJson.isInstance(value)) return value.text;
    if (isPlain(value, 0)) return JSON.stringify(value);
  }
  return validate(value, root) ? writeValidated(value) : JSON.stringify(value);
}

/** `JSON.parse(toWireJson(value))`: the value a replay will hand back. Same errors as toWireJson. */
export function normalizeJson(value: unknown, root = "value"): unknown {
  return JSON.parse(toWireJson(value, root));
}

// Non-strict serializer matching JSON.stringify, plus RawJson verbatim.
function writeLax(v: unknown, key: string, stack: object[]): string | undefined {
  if (typeof v === "object" && v !== null) {
    if (RawJson.isInstance(v)) return v.text;
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") v = toJSON.call(v, key);
  }
  switch (typeof v) {
    case "string":
    case "boolean":
    case "number":
    case "bigint": // JSON.stringify throws the usual TypeError for BigInt
      return JSON.stringify(v);
    case "object": {
      if (v === null) return "null";
      if (RawJson.isInstance(v)) return v.text;
      if (v instanceof Number || v instanceof String || v instanceof Boolean) return JSON.stringify(v);
      if (stack.includes(v)) throw new TypeError("Converting circular structure to JSON");
      stack.push(v);
      let out: string;
      if (Array.isArray(v)) {
        out = "[";
        for (let i = 0; i < v.length; i++)
          out += (i > 0 ? "," : "") + (writeLax(v[i], String(i), stack) ?? "null");
        out += "]";
      } else {
        out = "{";
        let first = true;
        for (const k of Object.keys(v)) {
          const item = writeLax((v as Record<string, unknown>)[k], k, stack);
          if (item === undefined) continue;
          out += `${first ? "" : ","}${JSON.stringify(k)}:${item}`;
          first = false;
        }
        out += "}";
      }
      stack.pop();
      return out;
    }
    default:
      return undefined;
  }
}

/**
 * `JSON.stringify` that emits `RawJson` verbatim (the dev kernel answers with stored raw text this
 * way). Not strict: other values follow JSON.stringify rules. A root `undefined` gives `"null"`.
 */
export function stringifyJson(value: unknown): string {
  const prevActive = rawProbe.active;
  const prevSeen = rawProbe.seen;
  rawProbe.active = true;
  rawProbe.seen = false;
  let out: string | undefined;
  let seen: boolean;
  try {
    out = JSON.stringify(value);
    seen = rawProbe.seen;
  } finally {
    rawProbe.active = prevActive;
    rawProbe.seen = prevSeen;
  }
  if (seen) out = writeLax(value, "", []);
  return out ?? "null";
}
