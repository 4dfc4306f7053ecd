/**
 * Canonical JSON of a JS value, computed by walking the value: keys are sorted and strings
 * Go-escaped while serializing, so nothing is serialized twice or re-parsed. The result must be
 * exactly `canonicalizeText(toWireJson(value))` (what the kernel computes from the body the SDK
 * sends); test/canonical-differential.test.ts checks that on random values.
 *
 * The walker only handles the ordinary case. For anything else (a value toWireJson rejects,
 * a non-plain object, nesting deeper than WALK_DEPTH, a cycle, a getter that throws, invalid
 * RawJson text) it gives up and the caller takes the text path, which then produces the exact
 * error toWireJson or the parser raises, or the canonical text of the rare valid case.
 */
import { canonicalizeText, GO_MAX_DEPTH } from "./canonical-text.js";
import {
  ASCII_PLAIN,
  compareUtf8,
  encodeGoString,
  isWellFormed,
  LOOP_CHARS,
  plainRunEnd,
  toWellFormed,
} from "./go-string.js";
import { RawJson } from "./raw-json.js";

/**
 * Deeper values go to the text path. Real arguments are far shallower; the bound also stops a
 * cycle (which the walker does not look for) after a few levels of wasted work.
 */
const WALK_DEPTH = 128;

/** Thrown (never seen by callers) when the walker gives up; see the module comment. */
const GIVE_UP: unique symbol = Symbol("canonical-value: give up");

/** Canonical JSON of `value`, or undefined when the caller must take the text path. */
export function canonicalValue(value: unknown): string | undefined {
  try {
    return walk(value, 0);
  } catch {
    // GIVE_UP, invalid RawJson text, or an error from user code (a getter): the text path raises
    // the error it would have raised anyway, in its own order.
    return undefined;
  }
}

/** `depth` = number of containers around `v`. */
function walk(v: unknown, depth: number): string {
  switch (typeof v) {
    case "string":
      return quote(v);
    case "number":
      // JSON.stringify's number text (shortest round-trip, -0 → "0"), which the text path keeps.
      if (Number.isFinite(v)) return String(v);
      throw GIVE_UP;
    case "boolean":
      return v ? "true" : "false";
    case "object": {
      if (v === null) return "null";
      if (depth >= WALK_DEPTH) throw GIVE_UP;
      if (Array.isArray(v)) return walkArray(v, depth + 1);
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto === Object.prototype || proto === null)
        return walkObject(v as Record<string, unknown>, depth + 1);
      // The text path emits RawJson text verbatim inside the document, `depth` containers deep.
      if (RawJson.isInstance(v)) return canonicalizeText(v.text, GO_MAX_DEPTH - depth);
      throw GIVE_UP; // Date, Map, class instances, another realm's objects …
    }
    default:
      throw GIVE_UP; // undefined (an array item), function, symbol, bigint
  }
}

function walkArray(a: readonly unknown[], depth: number): string {
  const n = a.length;
  if (n === 0) return "[]";
  let out = `[${walk(a[0], depth)}`;
  for (let i = 1; i < n; i++) out += `,${walk(a[i], depth)}`;
  return `${out}]`;
}

/**
 * Sorted, Go-encoded keys of an object: `names[k]` is `"key":` and `commaNames[k]` is `,"key":`
 * for `sorted[k]`.
 */
interface KeyPlan {
  readonly keys: readonly string[];
  readonly sorted: readonly string[];
  readonly names: readonly string[];
  readonly commaNames: readonly string[];
  /** Few and short keys: worth keeping in `plans`. */
  readonly cacheable: boolean;
}

/**
 * The last key plan made at each depth. Arguments and results are full of records with the same
 * keys (rows of a table, items of a list), and sorting and encoding the keys is most of the work
 * of a small object, so an object whose `Object.keys` equals the previous one's at its depth
 * reuses that plan: a few string compares, usually pointer compares since V8 interns property
 * names. Bounded (depth, key count and length) so it pins little memory.
 */
const plans: (KeyPlan | undefined)[] = [];
const PLAN_DEPTH = 32;
const PLAN_MAX_KEYS = 32;
const PLAN_MAX_CHARS = 1024;

function walkObject(o: Record<string, unknown>, depth: number): string {
  const keys = Object.keys(o);
  let plan = depth < PLAN_DEPTH ? plans[depth] : undefined;
  if (plan === undefined || !sameKeys(plan.keys, keys)) {
    plan = makePlan(keys);
    if (plan === undefined) return walkObjectWide(o, depth);
    if (depth < PLAN_DEPTH && plan.cacheable) plans[depth] = plan;
  }
  const { sorted, names, commaNames } = plan;
  let out = "{";
  let first = true;
  for (let k = 0; k < sorted.length; k++) {
    const item = o[sorted[k]!];
    if (item === undefined) continue; // toWireJson omits undefined properties, like JSON.stringify
    out += (first ? names[k]! : commaNames[k]!) + walk(item, depth);
    first = false;
  }
  return `${out}}`;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  for (let k = 0; k < n; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** Undefined when a key has a code unit ≥ U+D800 (see walkObjectWide). */
function makePlan(keys: readonly string[]): KeyPlan | undefined {
  const n = keys.length;
  const sorted = keys.slice();
  // UTF-16 order (`<`, native sort) is UTF-8 order when no key has a code unit ≥ U+D800.
  if (n > 16) sorted.sort();
  else {
    for (let k = 1; k < n; k++) {
      const key = sorted[k]!;
      let j = k - 1;
      while (j >= 0 && sorted[j]! > key) {
        sorted[j + 1] = sorted[j]!;
        j--;
      }
      sorted[j + 1] = key;
    }
  }
  const names: string[] = new Array(n);
  const commaNames: string[] = new Array(n);
  let chars = 0;
  for (let k = 0; k < n; k++) {
    const key = sorted[k]!;
    const name = quoteKey(key);
    if (name === undefined) return undefined;
    names[k] = `${name}:`;
    commaNames[k] = `,${name}:`;
    chars += key.length;
  }
  return { keys, sorted, names, commaNames, cacheable: n <= PLAN_MAX_KEYS && chars <= PLAN_MAX_CHARS };
}

/**
 * Objects with a key holding a code unit ≥ U+D800: sort with compareUtf8, and replace lone
 * surrogates by U+FFFD first (toWireJson escapes them, the text path decodes the escape to
 * U+FFFD), which can make two keys equal; then the later one in property order wins, as in Go.
 */
function walkObjectWide(o: Record<string, unknown>, depth: number): string {
  const members = new Map<string, unknown>();
  for (const key of Object.keys(o)) {
    const item = o[key];
    if (item !== undefined) members.set(toWellFormed(key), item);
  }
  const keys = [...members.keys()].sort(compareUtf8);
  let out = "{";
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    out += `${k > 0 ? "," : ""}${encodeGoString(key)}:${walk(members.get(key), depth)}`;
  }
  return `${out}}`;
}

/** Go encoding of a string value; lone surrogates become U+FFFD, as through the text path. */
function quote(s: string): string {
  const n = s.length;
  let run = 0; // plain characters since the last plainRunEnd
  for (let k = 0; k < n; ) {
    const c = s.charCodeAt(k);
    if (c < 0x80 ? ASCII_PLAIN[c] === 0 : c >= 0x2028 && (c <= 0x2029 || c >= 0xd800)) {
      return encodeGoString(isWellFormed(s) ? s : toWellFormed(s));
    }
    k++;
    if (++run === LOOP_CHARS) {
      k = plainRunEnd(s, k);
      run = 0;
    }
  }
  return `"${s}"`;
}

/** Like quote, but undefined for a key with a code unit ≥ U+D800 (see walkObject). */
function quoteKey(s: string): string | undefined {
  const n = s.length;
  for (let k = 0; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c < 0x80 ? ASCII_PLAIN[c] === 0 : c >= 0x2028 && (c <= 0x2029 || c >= 0xd800)) {
      return c >= 0xd800 || hasWideFrom(s, k) ? undefined : encodeGoString(s);
    }
  }
  return `"${s}"`;
}

function hasWideFrom(s: string, from: number): boolean {
  for (let k = from; k < s.length; k++) if (s.charCodeAt(k) >= 0xd800) return true;
  return false;
}
