/**
 * Canonical JSON of raw JSON text (docs/protocol.md §5.2), what the Go kernel computes: decode with
 * `UseNumber`, re-encode with `encoding/json`. A dedicated parser works on the text so number
 * literals (`1.0`, `1e21`, big integers) survive byte-for-byte, which `JSON.parse` cannot do.
 *
 * Copy-through design: the dev kernel canonicalizes every submission's args, which are mostly
 * already close to canonical (`JSON.stringify` output: no whitespace, strings that need no
 * re-escaping). So the parser does not rebuild text character by character; every value reports
 * either "my canonical form is my input range" or the string it rebuilt. Numbers, literals, most
 * strings and every container that is already canonical (sorted unique keys, no whitespace,
 * canonical members) stay input ranges, and an already-canonical document is returned as the
 * input string itself. Objects whose keys are out of order are rebuilt from their members' slices.
 */
import { clearLiteral, jsonError, literal, scanLiteral } from "./canonical-string.js";
import { ValidationError } from "./errors.js";
import { compareUtf8 } from "./go-string.js";

/** Go's `encoding/json` nesting limit (`maxNestingDepth`). */
export const GO_MAX_DEPTH = 10_000;

/** Frames up to this depth are pooled and reused across calls; deeper ones are allocated. */
const POOLED_DEPTH = 64;
/** Pooled arrays (frames' members, sort scratch) keep their capacity up to this many members. */
const POOLED_MEMBERS = 256;

/** An open array: its canonical text is `out` followed by the input from `runStart` onwards. */
class ArrayFrame {
  readonly isObject = false;
  start = 0;
  /** Canonical text rebuilt so far; "" while the array is still an exact copy of its input. */
  out = "";
  /** Start of the input not yet copied into `out` (= `start` while nothing was rebuilt). */
  runStart = 0;

  open(start: number): this {
    this.start = start;
    this.runStart = start;
    return this;
  }

  release(): void {
    this.out = "";
  }
}

/** An open object: its members are kept apart until `}` shows whether they need sorting. */
class ObjectFrame {
  readonly isObject = true;
  start = 0;
  /** Members so far. Per member: decoded key, input range (key quote … value end), and its
   *  canonical `"key":value`, or undefined when that is the input range itself. The arrays are
   *  reused (pooled frames), so only the first `n` entries are meaningful. */
  n = 0;
  readonly keys: string[] = [];
  readonly mStart: number[] = [];
  readonly mEnd: number[] = [];
  readonly mOut: (string | undefined)[] = [];
  /** Every key so far is greater than the previous one in UTF-8 order (no sort, no duplicate). */
  sorted = true;
  /** No whitespace inside the object and every member is its input range: the object is too. */
  clean = true;
  /** Keys with a code unit ≥ U+D800 (two of them need compareUtf8 rather than `<`). */
  wideKeys = 0;
  lastWide = false;
  // The member being parsed: start, end and canonical text of its key; whether key, `:` and
  // value are contiguous with a canonical key.
  memberStart = 0;
  keyEnd = 0;
  keyOut: string | undefined = undefined;
  memberClean = true;

  open(start: number, clean: boolean): this {
    this.start = start;
    this.n = 0;
    this.sorted = true;
    this.clean = clean;
    this.wideKeys = 0;
    this.lastWide = false;
    return this;
  }

  /** Drops the strings (slices pin the whole input) so a pooled frame holds nothing. */
  release(): void {
    const { keys, mStart, mEnd, mOut, n } = this;
    if (n > POOLED_MEMBERS) {
      // Do not keep the capacity of a huge object around either.
      keys.length = mStart.length = mEnd.length = mOut.length = 0;
    } else {
      for (let k = 0; k < n; k++) {
        keys[k] = "";
        mOut[k] = undefined;
      }
    }
    this.n = 0;
    this.keyOut = undefined;
  }
}

type Frame = ArrayFrame | ObjectFrame;

class TextCanonicalizer {
  s = "";
  maxDepth = 0;
  i = 0;
  /** The value just parsed spans [vStart, i); vOut is its canonical text, undefined when that is
   *  the input range itself. */
  vStart = 0;
  vOut: string | undefined = undefined;
  /** Open containers: stack[0 … depth - 1]. */
  readonly stack: Frame[] = [];
  depth = 0;
  readonly arrays: ArrayFrame[] = [];
  readonly objects: ObjectFrame[] = [];

  run(s: string, maxDepth: number): string {
    this.s = s;
    this.maxDepth = maxDepth;
    this.i = 0;
    try {
      return this.document();
    } finally {
      // Also after an error: leave no input text behind in this reusable instance.
      for (let d = 0; d < this.depth; d++) this.stack[d]!.release();
      if (this.stack.length > POOLED_DEPTH) this.stack.length = POOLED_DEPTH;
      this.depth = 0;
      this.s = "";
      this.vOut = undefined;
      clearLiteral();
    }
  }

  fail(what: string): never {
    throw jsonError(this.s, this.i, what);
  }

  /** Skips whitespace; true when there was some (which canonical output drops). */
  ws(): boolean {
    const s = this.s;
    const start = this.i;
    let i = start;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.i = i;
    return i !== start;
  }

  document(): string {
    const s = this.s;
    this.ws();
    this.value();
    const start = this.vStart;
    const end = this.i;
    const out = this.vOut;
    this.ws();
    if (this.i !== s.length) this.fail("unexpected data after top-level value");
    if (out !== undefined) return out;
    return start === 0 && end === s.length ? s : s.slice(start, end);
  }

  /** A frame for a container opened at depth `this.depth`. */
  openArray(start: number): ArrayFrame {
    const d = this.depth;
    if (d >= POOLED_DEPTH) return new ArrayFrame().open(start);
    return (this.arrays[d] ??= new ArrayFrame()).open(start);
  }

  openObject(start: number, clean: boolean): ObjectFrame {
    const d = this.depth;
    if (d >= POOLED_DEPTH) return new ObjectFrame().open(start, clean);
    return (this.objects[d] ??= new ObjectFrame()).open(start, clean);
  }

  // Key of an object member plus the ':' after it; leaves `i` on the member's value.
  key(f: ObjectFrame): void {
    const s = this.s;
    if (s.charCodeAt(this.i) !== 0x22) this.fail("expected string key");
    f.memberStart = this.i;
    scanLiteral(s, this.i, true);
    this.i = f.keyEnd = literal.end;
    const keyOut = literal.out;
    f.keyOut = keyOut;
    const key = literal.key;
    const wide = literal.wide;
    const n = f.n;
    if (n > 0 && f.sorted) {
      const prev = f.keys[n - 1]!;
      // `<` is UTF-8 order unless both keys have a code unit ≥ U+D800 (see compareUtf8).
      if (wide && f.lastWide ? compareUtf8(prev, key) >= 0 : !(prev < key)) f.sorted = false;
    }
    f.keys[n] = key;
    f.lastWide = wide;
    if (wide) f.wideKeys++;
    let clean = keyOut === undefined;
    if (s.charCodeAt(this.i) <= 0x20 && this.ws()) clean = false;
    if (s.charCodeAt(this.i) !== 0x3a) this.fail("expected ':'");
    this.i++;
    if (s.charCodeAt(this.i) <= 0x20 && this.ws()) clean = false;
    f.memberClean = clean;
  }

  // Iterative (explicit stack) so Go's 10 000 nesting levels never touch the JS call stack.
  value(): void {
    const s = this.s;
    const stack = this.stack;
    for (;;) {
      // Parse the start of a value; containers push a frame and loop to their first member.
      const c = s.charCodeAt(this.i);
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (this.depth >= this.maxDepth) this.fail("exceeded max depth");
        const start = this.i++;
        const moved = s.charCodeAt(this.i) <= 0x20 && this.ws();
        if (c === 0x7b) {
          if (s.charCodeAt(this.i) === 0x7d) {
            this.i++;
            this.vStart = start;
            this.vOut = moved ? "{}" : undefined;
          } else {
            const f = this.openObject(start, !moved);
            stack[this.depth++] = f;
            this.key(f);
            continue;
          }
        } else if (s.charCodeAt(this.i) === 0x5d) {
          this.i++;
          this.vStart = start;
          this.vOut = moved ? "[]" : undefined;
        } else {
          const f = this.openArray(start);
          if (moved) {
            f.out = "[";
            f.runStart = this.i;
          }
          stack[this.depth++] = f;
          continue;
        }
      } else {
        this.scalar(c);
      }
      // Attach the finished value to its parents, closing every container that ends here.
      for (;;) {
        if (this.depth === 0) return;
        const top = stack[this.depth - 1]!;
        if (top.isObject) this.member(top);
        else if (this.vOut !== undefined) {
          top.out += s.slice(top.runStart, this.vStart) + this.vOut;
          top.runStart = this.i;
        }
        let p = this.i;
        let d = s.charCodeAt(p);
        if (d <= 0x20 && this.ws()) {
          this.dropWs(top, p);
          d = s.charCodeAt(this.i);
        }
        if (d === 0x2c /* , */) {
          p = ++this.i;
          if (s.charCodeAt(p) <= 0x20 && this.ws()) this.dropWs(top, p);
          if (top.isObject) this.key(top);
          break;
        }
        if (top.isObject ? d !== 0x7d : d !== 0x5d) {
          this.fail(top.isObject ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        this.i++;
        this.depth--;
        this.vStart = top.start;
        if (top.isObject) this.vOut = this.closeObject(top);
        else this.vOut = top.runStart === top.start ? undefined : top.out + s.slice(top.runStart, this.i);
        top.release();
      }
    }
  }

  /** Whitespace at [p, i) inside a container: arrays copy up to it and skip it. */
  dropWs(top: Frame, p: number): void {
    if (top.isObject) top.clean = false;
    else {
      top.out += this.s.slice(top.runStart, p);
      top.runStart = this.i;
    }
  }

  /** Records the value just parsed as the current member of `f`. */
  member(f: ObjectFrame): void {
    const vOut = this.vOut;
    const n = f.n;
    if (vOut === undefined && f.memberClean) f.mOut[n] = undefined;
    else {
      const s = this.s;
      f.clean = false;
      f.mOut[n] = `${f.keyOut ?? s.slice(f.memberStart, f.keyEnd)}:${vOut ?? s.slice(this.vStart, this.i)}`;
    }
    f.mStart[n] = f.memberStart;
    f.mEnd[n] = this.i;
    f.n = n + 1;
  }

  closeObject(f: ObjectFrame): string | undefined {
    const s = this.s;
    const { mStart, mEnd, mOut, n } = f;
    if (f.sorted) {
      if (f.clean) return undefined;
      let out = "{";
      for (let k = 0; k < n; k++) out += (k > 0 ? "," : "") + (mOut[k] ?? s.slice(mStart[k], mEnd[k]));
      return `${out}}`;
    }
    const keys = f.keys;
    const order = sortMembers(keys, n, f.wideKeys > 1);
    let out = "{";
    let first = true;
    for (let k = 0; k < n; k++) {
      const m = order[k]!;
      // Go decodes objects into a map: a later duplicate replaces the earlier value. The sort is
      // stable, so the last of a run of equal keys is the last duplicate in the input.
      if (k + 1 < n && keys[order[k + 1]!] === keys[m]) continue;
      out += (first ? "" : ",") + (mOut[m] ?? s.slice(mStart[m], mEnd[m]));
      first = false;
    }
    return `${out}}`;
  }

  scalar(c: number): void {
    const s = this.s;
    this.vStart = this.i;
    this.vOut = undefined;
    if (c === 0x22) {
      scanLiteral(s, this.i, false);
      this.i = literal.end;
      this.vOut = literal.out;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.number();
    else if (s.startsWith("true", this.i)) this.i += 4;
    else if (s.startsWith("false", this.i)) this.i += 5;
    else if (s.startsWith("null", this.i)) this.i += 4;
    else this.fail(this.i < s.length ? "unexpected character" : "unexpected end of input");
  }

  // RFC 8259 number grammar; the literal text is kept untouched (Go `json.Number`).
  number(): void {
    const s = this.s;
    let i = this.i;
    if (s.charCodeAt(i) === 0x2d) i++;
    const first = s.charCodeAt(i);
    if (first === 0x30) i++;
    else if (first >= 0x31 && first <= 0x39) {
      while (isDigit(s.charCodeAt(i))) i++;
    } else {
      this.i = i;
      this.fail("invalid number");
    }
    if (s.charCodeAt(i) === 0x2e) {
      i++;
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i;
        this.fail("invalid number");
      }
      while (isDigit(s.charCodeAt(i))) i++;
    }
    const e = s.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i;
        this.fail("invalid number");
      }
      while (isDigit(s.charCodeAt(i))) i++;
    }
    this.i = i;
  }
}

// Scratch arrays for sortMembers (closeObject never runs re-entrantly).
const ORDER: number[] = [];
const MERGE: number[] = [];

function before(x: string, y: string, wide: boolean): boolean {
  return wide ? compareUtf8(x, y) < 0 : x < y;
}

/**
 * Indices 0 … n-1 of `keys` in UTF-8 key order, stable (equal keys keep input order). Hand-written
 * rather than Array.prototype.sort: no comparator callback per comparison, no allocation. `wide`:
 * some keys have code units ≥ U+D800, where `<` (UTF-16 order) is not UTF-8 order.
 */
function sortMembers(keys: readonly string[], n: number, wide: boolean): number[] {
  const pooled = n <= POOLED_MEMBERS;
  const order = pooled ? ORDER : new Array<number>(n);
  for (let k = 0; k < n; k++) order[k] = k;
  // Insertion sort on runs of 8, then bottom-up merges: tool arguments have a handful of keys.
  const RUN = 8;
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(lo + RUN, n);
    for (let k = lo + 1; k < hi; k++) {
      const m = order[k]!;
      const key = keys[m]!;
      let j = k - 1;
      while (j >= lo && before(key, keys[order[j]!]!, wide)) {
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = m;
    }
  }
  let src = order;
  let dst = pooled ? MERGE : new Array<number>(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let a = lo;
      let b = mid;
      for (let k = lo; k < hi; k++) {
        // Take from the right run only when strictly smaller: that keeps the sort stable.
        if (a < mid && (b >= hi || !before(keys[src[b]!]!, keys[src[a]!]!, wide))) dst[k] = src[a++]!;
        else dst[k] = src[b++]!;
      }
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The reusable instance when no call is using it. */
let idle: TextCanonicalizer | undefined;

/**
 * Canonical form of one JSON text (already decoded to a JS string). `maxDepth` bounds the nesting
 * of arrays/objects; a `RawJson` nested d levels deep in a value gets the Go limit minus d.
 * Invalid JSON → `ValidationError`.
 */
export function canonicalizeText(s: string, maxDepth: number): string {
  // One instance is reused (its frames are pooled); canonicalizing never calls out to user code,
  // so it is never re-entered.
  const parser = idle ?? new TextCanonicalizer();
  idle = undefined;
  try {
    return parser.run(s, maxDepth);
  } catch (err) {
    if (err instanceof RangeError)
      throw new ValidationError("invalid JSON: nesting too deep", { cause: err });
    throw err;
  } finally {
    idle = parser;
  }
}
