/**
 * RE2 (Go `regexp`) → JavaScript `RegExp` translation for policy `regex` predicates.
 *
 * The production kernel matches with Go's `regexp.MatchString`, so a bundle must be accepted or
 * rejected, and must match, the same way here. Rather than hand the pattern to V8 and hope, we
 * parse it with RE2's grammar and re-emit an equivalent `u`-mode JavaScript pattern:
 *
 * - **Rejected** because RE2 rejects them: lookahead/lookbehind (`(?=` `(?!` `(?<=` `(?<!`),
 *   backreferences (`\1`, `\k<n>`, `(?P=n)`), atomic/possessive/comment groups, `\C`, `\Z`,
 *   unknown escapes such as `\q`, stacked quantifiers (`a**`), repeat counts above 1000,
 *   `{n,m}` with n > m, invalid group names, unknown POSIX/Unicode classes.
 * - **Translated** where JS differs: `(?P<name>` / `(?<name>` become plain groups (names cannot
 *   affect `MatchString`); inline flags — `s` and `m` are applied by rewriting `.`, `^` and `$`
 *   so they work in any scope, `U` (ungreedy) by flipping each quantifier's laziness, and `i` maps
 *   to the JS `i` flag; `\A` / `\z`; `\Q…\E`; `\a`, octal `\123`, `\x{10FFFF}`; POSIX classes
 *   `[[:alpha:]]`; `\pL`, `\p{Greek}`, `\p{^Greek}`; a `]` first in a class is literal; a `{`
 *   that does not start a repeat is literal. Perl classes `\d \s \w` are emitted as explicit
 *   ASCII sets because RE2's `\s` is `[\t\n\f\r ]` (no `\v`, no Unicode spaces), and `.` as
 *   `[^\n]` because JS's `.` also stops at `\r`, U+2028 and U+2029.
 * - **Cannot translate**: case-insensitivity that covers only part of the pattern (`ab(?i)c`,
 *   `(?i:x)y`), since JS (Node 20) has no scoped modifiers. Rejected with a clear message.
 *   Whole-pattern `(?i)` (the common case) is supported.
 *
 * Known residual differences (documented, not worth the complexity): JS backtracks, so a
 * pathological pattern can be slow where RE2 is linear; under `(?i)` JS's `\b` also treats
 * U+017F and U+212A as word characters; Unicode tables follow Node's ICU version, not Go's.
 *
 * Cross-checked against Go 1.26 `regexp` on ~140 patterns (see test/policy/regex.test.ts).
 */

import {
  CATEGORIES,
  complement,
  cpHasCase,
  hexVal,
  isAlnum,
  isDigit,
  isOctal,
  lit,
  MAX_CP,
  PERL,
  POSIX,
  rangeHasCase,
  rangesText,
} from "./regex-classes.js";

const MAX_REPEAT = 1000;

/** Thrown by {@link compileRe2} for a pattern RE2 would reject or that cannot be translated. */
export class RegexSyntaxError extends Error {
  static {
    RegexSyntaxError.prototype.name = "RegexSyntaxError";
  }
}

/** The JavaScript equivalent of an RE2 pattern. */
export interface TranslatedRegex {
  readonly source: string;
  readonly flags: string;
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

type PieceKind = "atom" | "assert" | "repeated" | "bar";
interface Piece {
  text: string;
  kind: PieceKind;
}

interface Frame {
  readonly open: string;
  readonly saved: Flags;
  readonly pieces: Piece[];
}

/** A class member: a code point range, or a ready-made JS escape (for `\p{…}`). */
interface ClassItem {
  /** Text usable inside a JS bracket class. */
  readonly text: string;
  /** Whether case-insensitive matching could change the set. */
  readonly cased: boolean;
}

class Re2Translator {
  private readonly cps: number[];
  private i = 0;
  private flags: Flags = { i: false, m: false, s: false, U: false };
  private readonly frames: Frame[] = [{ open: "", saved: this.flags, pieces: [] }];
  /** The `i` state seen at every case-sensitive atom; both values present = untranslatable. */
  private readonly caseStates = new Set<boolean>();

  constructor(private readonly pattern: string) {
    this.cps = Array.from(pattern, (ch) => ch.codePointAt(0) ?? 0);
  }

  private fail(why: string): never {
    throw new RegexSyntaxError(`invalid regex ${JSON.stringify(this.pattern)}: ${why}`);
  }

  private peek(offset = 0): number | undefined {
    return this.cps[this.i + offset];
  }

  private get pieces(): Piece[] {
    return (this.frames.at(-1) as Frame).pieces;
  }

  private atom(text: string, cased: boolean): void {
    if (cased) this.caseStates.add(this.flags.i);
    this.pieces.push({ text, kind: "atom" });
  }

  private assertion(text: string): void {
    // Wrapped so a (legal in RE2) quantifier on it stays legal in u-mode JS.
    this.pieces.push({ text: `(?:${text})`, kind: "assert" });
  }

  translate(): TranslatedRegex {
    while (this.i < this.cps.length) this.step();
    if (this.frames.length > 1) this.fail("missing closing )");
    if (this.caseStates.has(true) && this.caseStates.has(false)) {
      this.fail(
        "case-insensitive matching ((?i)) must apply to the whole pattern; scoped or mid-pattern (?i) cannot be translated",
      );
    }
    const source = (this.frames[0] as Frame).pieces.map((p) => p.text).join("");
    return { source, flags: this.caseStates.has(true) ? "iu" : "u" };
  }

  private step(): void {
    const c = this.peek() as number;
    switch (c) {
      case 0x28 /* ( */:
        this.openGroup();
        return;
      case 0x29 /* ) */:
        {
          if (this.frames.length === 1) this.fail("unexpected )");
          this.i += 1;
          const frame = this.frames.pop() as Frame;
          this.flags = frame.saved;
          this.pieces.push({
            text: `${frame.open}${frame.pieces.map((p) => p.text).join("")})`,
            kind: "atom",
          });
          return;
        }
      case 0x7c /* | */:
        this.i += 1;
        this.pieces.push({ text: "|", kind: "bar" });
        return;
      case 0x2a /* * */:
      case 0x2b /* + */:
      case 0x3f /* ? */:
        this.i += 1;
        this.quantify(String.fromCodePoint(c));
        return;
      case 0x7b /* { */:
        {
          const rep = this.tryRepeat();
          if (rep === undefined) {
            this.i += 1;
            this.atom(lit(c), false);
          } else {
            this.quantify(rep);
          }
          return;
        }
      case 0x5e /* ^ */:
        this.i += 1;
        this.assertion(this.flags.m ? "(?<![^\\n])" : "^");
        return;
      case 0x24 /* $ */:
        this.i += 1;
        this.assertion(this.flags.m ? "(?![^\\n])" : "$");
        return;
      case 0x2e /* . */:
        this.i += 1;
        this.atom(this.flags.s ? "[\\u{0}-\\u{10ffff}]" : "[^\\n]", false);
        return;
      case 0x5b /* [ */:
        this.parseClass();
        return;
      case 0x5c /* \ */:
        this.topEscape();
        return;
      default:
        this.i += 1;
        this.atom(lit(c), cpHasCase(c));
    }
  }

  private quantify(op: string): void {
    let nonGreedy = false;
    if (this.peek() === 0x3f /* ? */) {
      this.i += 1;
      nonGreedy = true;
    }
    // (?U) swaps the meaning of `x*` and `x*?`.
    if (this.flags.U) nonGreedy = !nonGreedy;
    const last = this.pieces.at(-1);
    if (last === undefined || last.kind === "bar") this.fail(`missing argument to repetition operator ${op}`);
    if (last.kind === "repeated") this.fail(`invalid nested repetition operator ${op}`);
    last.text = `${last.kind === "assert" ? `(?:${last.text})` : last.text}${op}${nonGreedy ? "?" : ""}`;
    last.kind = "repeated";
  }

  /** Parses `{n}`, `{n,}`, `{n,m}` at the cursor; `undefined` means `{` is a literal. */
  private tryRepeat(): string | undefined {
    let j = this.i + 1;
    const num = (): number | undefined => {
      const start = j;
      while (isDigit(this.cps[j])) j += 1;
      if (j === start) return undefined;
      // RE2 does not read "01" as a number, so such a brace is a literal.
      if (j - start > 1 && this.cps[start] === 0x30) return undefined;
      return Number(String.fromCodePoint(...this.cps.slice(start, j)));
    };
    const min = num();
    if (min === undefined) return undefined;
    let max: number | undefined = min;
    if (this.cps[j] === 0x2c /* , */) {
      j += 1;
      if (this.cps[j] === 0x7d /* } */) {
        max = undefined;
      } else {
        max = num();
        if (max === undefined) return undefined;
      }
    }
    if (this.cps[j] !== 0x7d /* } */) return undefined;
    const text = String.fromCodePoint(...this.cps.slice(this.i, j + 1));
    this.i = j + 1;
    if (min > MAX_REPEAT || (max !== undefined && (max > MAX_REPEAT || min > max))) {
      this.fail(`invalid repeat count ${text}`);
    }
    return text;
  }

  private openGroup(): void {
    this.i += 1;
    if (this.peek() !== 0x3f /* ? */) {
      this.frames.push({ open: "(", saved: this.flags, pieces: [] });
      return;
    }
    this.i += 1;
    const c = this.peek();
    if (c === 0x3d /* = */ || c === 0x21 /* ! */) {
      this.fail("lookahead assertions ((?= and (?!) are not supported by RE2");
    }
    if (c === 0x3c /* < */ && (this.peek(1) === 0x3d || this.peek(1) === 0x21)) {
      this.fail("lookbehind assertions ((?<= and (?<!) are not supported by RE2");
    }
    if (c === 0x50 /* P */ && this.peek(1) === 0x3d /* = */) {
      this.fail("backreferences ((?P=name)) are not supported by RE2");
    }
    if (c === 0x3c || (c === 0x50 && this.peek(1) === 0x3c)) {
      this.namedGroup(c === 0x50 ? 2 : 1);
      return;
    }
    this.flagGroup();
  }

  private namedGroup(skip: number): void {
    this.i += skip;
    const start = this.i;
    while (this.peek() !== undefined && this.peek() !== 0x3e /* > */) this.i += 1;
    if (this.peek() === undefined) this.fail("unterminated group name");
    const name = String.fromCodePoint(...this.cps.slice(start, this.i));
    this.i += 1;
    // RE2 names are [A-Za-z0-9_]+ (a leading digit is fine there, unlike JS, so we never emit names;
    // current Go also accepts a repeated name, which JS would reject).
    if (!/^[A-Za-z0-9_]+$/.test(name)) this.fail(`invalid capture group name ${JSON.stringify(name)}`);
    this.frames.push({ open: "(", saved: this.flags, pieces: [] });
  }

  /** `(?flags)` or `(?flags:…)` following Go's parsePerlFlags, cursor just after `(?`. */
  private flagGroup(): void {
    const start = this.i - 2;
    const next: Flags = { ...this.flags };
    let negate = false;
    let sawFlag = false;
    const bad = (): never =>
      this.fail(
        `invalid or unsupported group syntax ${String.fromCodePoint(...this.cps.slice(start, this.i))}`,
      );
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail("missing closing )");
      this.i += 1;
      const ch = String.fromCodePoint(c);
      if (ch === "i" || ch === "m" || ch === "s" || ch === "U") {
        next[ch] = !negate;
        sawFlag = true;
      } else if (ch === "-") {
        if (negate) bad();
        negate = true;
        sawFlag = false;
      } else if (ch === ":" || ch === ")") {
        if (negate && !sawFlag) bad();
        if (ch === ":") {
          this.frames.push({ open: "(?:", saved: this.flags, pieces: [] });
        }
        this.flags = next;
        return;
      } else {
        bad();
      }
    }
  }

  private topEscape(): void {
    const c = this.peek(1);
    if (c === undefined) this.fail("trailing backslash at end of expression");
    switch (c) {
      case 0x41 /* A */:
        this.i += 2;
        this.assertion("^"); // the JS `m` flag is never set, so ^ is start of input
        return;
      case 0x7a /* z */:
        this.i += 2;
        this.assertion("$");
        return;
      case 0x62 /* b */:
        this.i += 2;
        this.assertion("\\b");
        return;
      case 0x42 /* B */:
        this.i += 2;
        this.assertion("\\B");
        return;
      case 0x43 /* C */:
        this.fail("\\C (match any byte) is not supported");
        return;
      case 0x5a /* Z */:
        this.fail("\\Z is not supported by RE2 (use \\z)");
        return;
      case 0x51 /* Q */:
        {
          this.i += 2;
          while (this.i < this.cps.length) {
            if (this.peek() === 0x5c && this.peek(1) === 0x45 /* \E */) {
              this.i += 2;
              return;
            }
            const q = this.peek() as number;
            this.i += 1;
            this.atom(lit(q), cpHasCase(q));
          }
          return;
        }
      default:
        break;
    }
    const cls = this.classEscape();
    if (cls !== undefined) {
      if (cls.cased) this.caseStates.add(this.flags.i);
      this.pieces.push({ text: `[${cls.text}]`, kind: "atom" });
      return;
    }
    const cp = this.charEscape();
    this.atom(lit(cp), cpHasCase(cp));
  }

  /** Perl (`\d`) or Unicode (`\pL`) class escape at the cursor, as class-body text. */
  private classEscape(): ClassItem | undefined {
    const c = this.peek(1);
    if (c === undefined) return undefined;
    const letter = String.fromCodePoint(c);
    const perl = PERL[letter.toLowerCase()];
    if (perl !== undefined && "dswDSW".includes(letter)) {
      this.i += 2;
      const negated = letter !== letter.toLowerCase();
      return { text: rangesText(negated ? complement(perl) : perl), cased: letter.toLowerCase() === "w" };
    }
    if (letter === "p" || letter === "P") return this.unicodeClass(letter === "P");
    return undefined;
  }

  private unicodeClass(negatedEscape: boolean): ClassItem {
    this.i += 2;
    let name: string;
    const c = this.peek();
    if (c === undefined) this.fail("invalid character class range \\p");
    if (c === 0x7b /* { */) {
      const start = this.i + 1;
      while (this.peek() !== undefined && this.peek() !== 0x7d) this.i += 1;
      if (this.peek() === undefined) this.fail("invalid character class range: unterminated \\p{");
      name = String.fromCodePoint(...this.cps.slice(start, this.i));
      this.i += 1;
    } else {
      name = String.fromCodePoint(c);
      this.i += 1;
    }
    let negated = negatedEscape;
    if (name.startsWith("^")) {
      negated = !negated;
      name = name.slice(1);
    }
    const p = negated ? "P" : "p";
    let text: string;
    if (name === "Any" || CATEGORIES.has(name)) {
      text = `\\${p}{${name}}`;
    } else {
      text = `\\${p}{Script=${name}}`;
    }
    try {
      new RegExp(`[${text}]`, "u");
    } catch {
      this.fail(`unknown Unicode class ${JSON.stringify(name)}`);
    }
    return { text, cased: true };
  }

  /** A single-character escape (cursor on the backslash), per Go's parseEscape. */
  private charEscape(): number {
    this.i += 1;
    const c = this.peek();
    if (c === undefined) this.fail("trailing backslash at end of expression");
    this.i += 1;
    // Escaped ASCII punctuation (anything non-alphanumeric, including `_`) is itself.
    if (c < 0x80 && !isAlnum(c)) return c;
    if (c >= 0x31 && c <= 0x37 && isOctal(this.peek())) return this.octal(c - 0x30);
    if (c >= 0x31 && c <= 0x39)
      this.fail(`backreferences (\\${String.fromCodePoint(c)}) are not supported by RE2`);
    switch (c) {
      case 0x30 /* 0 */:
        return this.octal(0);
      case 0x78 /* x */:
        return this.hexEscape();
      case 0x61 /* a */:
        return 0x07;
      case 0x66 /* f */:
        return 0x0c;
      case 0x6e /* n */:
        return 0x0a;
      case 0x72 /* r */:
        return 0x0d;
      case 0x74 /* t */:
        return 0x09;
      case 0x76 /* v */:
        return 0x0b;
      case 0x6b /* k */:
        return this.fail("backreferences (\\k<name>) are not supported by RE2");
      default:
        return this.fail(`invalid escape sequence \\${String.fromCodePoint(c)}`);
    }
  }

  /** Up to three octal digits in total, the first already consumed. */
  private octal(first: number): number {
    let r = first;
    for (let n = 1; n < 3 && isOctal(this.peek()); n += 1) {
      r = r * 8 + ((this.peek() as number) - 0x30);
      this.i += 1;
    }
    return r;
  }

  private hexEscape(): number {
    if (this.peek() === 0x7b /* { */) {
      this.i += 1;
      let r = 0;
      let n = 0;
      while (hexVal(this.peek()) >= 0) {
        r = r * 16 + hexVal(this.peek());
        if (r > MAX_CP) this.fail("invalid escape sequence: \\x{…} beyond U+10FFFF");
        this.i += 1;
        n += 1;
      }
      if (n === 0 || this.peek() !== 0x7d) this.fail("invalid escape sequence \\x{");
      this.i += 1;
      return r;
    }
    const hi = hexVal(this.peek());
    const lo = hexVal(this.peek(1));
    if (hi < 0 || lo < 0) this.fail("invalid escape sequence \\x (needs two hex digits or \\x{…})");
    this.i += 2;
    return hi * 16 + lo;
  }

  /** A bracket class, following Go's parseClass (Perl flags: `-` is fine anywhere). */
  private parseClass(): void {
    const start = this.i;
    this.i += 1;
    let negated = false;
    if (this.peek() === 0x5e /* ^ */) {
      negated = true;
      this.i += 1;
    }
    const items: ClassItem[] = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) {
        this.fail(`missing closing ] in ${String.fromCodePoint(...this.cps.slice(start))}`);
      }
      if (c === 0x5d /* ] */ && !first) {
        this.i += 1;
        break;
      }
      first = false;
      if (c === 0x5b && this.peek(1) === 0x3a /* [: */) {
        const posix = this.posixClass();
        if (posix !== undefined) {
          items.push(posix);
          continue;
        }
      }
      if (c === 0x5c /* \ */) {
        const cls = this.classEscape();
        if (cls !== undefined) {
          items.push(cls);
          continue;
        }
      }
      const lo = this.classChar();
      let hi = lo;
      if (this.peek() === 0x2d /* - */ && this.peek(1) !== undefined && this.peek(1) !== 0x5d) {
        this.i += 1;
        hi = this.classChar();
        if (hi < lo) {
          this.fail(`invalid character class range ${String.fromCodePoint(lo)}-${String.fromCodePoint(hi)}`);
        }
      }
      items.push({ text: rangesText([[lo, hi]]), cased: rangeHasCase([lo, hi]) });
    }
    if (items.some((it) => it.cased)) this.caseStates.add(this.flags.i);
    this.pieces.push({ text: `[${negated ? "^" : ""}${items.map((it) => it.text).join("")}]`, kind: "atom" });
  }

  private classChar(): number {
    const c = this.peek();
    if (c === undefined) this.fail("missing closing ]");
    if (c === 0x5c) return this.charEscape();
    this.i += 1;
    return c;
  }

  /** `[:name:]` / `[:^name:]` inside a class; `undefined` if there is no closing `:]`. */
  private posixClass(): ClassItem | undefined {
    let j = this.i + 2;
    while (j + 1 < this.cps.length && !(this.cps[j] === 0x3a && this.cps[j + 1] === 0x5d)) j += 1;
    if (j + 1 >= this.cps.length) return undefined;
    let name = String.fromCodePoint(...this.cps.slice(this.i + 2, j));
    const negated = name.startsWith("^");
    if (negated) name = name.slice(1);
    const ranges = Object.hasOwn(POSIX, name) ? POSIX[name] : undefined;
    if (ranges === undefined) this.fail(`invalid character class range [:${negated ? "^" : ""}${name}:]`);
    this.i = j + 2;
    return { text: rangesText(negated ? complement(ranges) : ranges), cased: ranges.some(rangeHasCase) };
  }
}

/**
 * Translates an RE2 pattern to JavaScript source and flags without compiling it.
 *
 * @throws RegexSyntaxError when RE2 would reject the pattern or it cannot be translated.
 */
export function translateRe2(pattern: string): TranslatedRegex {
  return new Re2Translator(pattern).translate();
}

/**
 * Compiles an RE2 pattern into an equivalent JavaScript `RegExp` (unanchored, like
 * `regexp.MatchString`; never global or sticky, so `test` keeps no state between calls).
 *
 * @throws RegexSyntaxError when RE2 would reject the pattern or it cannot be translated.
 */
export function compileRe2(pattern: string): RegExp {
  const { source, flags } = translateRe2(pattern);
  try {
    return new RegExp(source, flags);
  } catch (err) {
    // Defensive: the translator only emits u-mode-valid syntax, so this signals a translator bug.
    throw new RegexSyntaxError(`invalid regex ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}
