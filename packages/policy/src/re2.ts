/**
 * `regex` argument predicates, matched like the production kernel's Go `regexp`: compiled with
 * RE2 syntax (re2js, a pure-JavaScript port of Go's `regexp`) and applied with `MatchString`
 * semantics (unanchored search). Matching runs in time linear in the argument's length, whatever
 * the pattern — a JavaScript `RegExp` backtracks, and one crafted pattern could stall the kernel.
 *
 * re2js accepts and rejects the same syntax as Go (lookaround, backreferences, `\C`, `\Z`,
 * possessive and atomic groups are refused; `\pL`, `(?P<name>…)`, `(?<name>…)`, scoped flags such
 * as `(?i:…)`, `\Q…\E` and POSIX classes are accepted), and its error text is Go's
 * (`error parsing regexp: invalid escape sequence: `\C``). One difference is bridged here: Go
 * allows two groups with the same name, re2js refuses them (see {@link stripGroupNames}).
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from "re2js";

/** Thrown by {@link compileRe2} for a pattern Go's `regexp.Compile` rejects; the message is Go's. */
export class RegexSyntaxError extends Error {
  static {
    RegexSyntaxError.prototype.name = "RegexSyntaxError";
  }
}

/** A compiled `regex` predicate. */
export interface Re2Pattern {
  /** The pattern as written in the bundle. */
  readonly source: string;
  /** Go `regexp.MatchString`: true when the pattern matches anywhere in `text`. */
  test(text: string): boolean;
}

const DUPLICATE_NAME = "duplicate capture group name";

/**
 * Compiles a policy `regex` (RE2 syntax, flags only inline such as `(?i)`).
 *
 * @throws RegexSyntaxError with Go's error text when Go would refuse the pattern.
 */
export function compileRe2(pattern: string): Re2Pattern {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (err) {
    if (!(err instanceof RE2JSException)) throw err;
    if (!err.message.includes(DUPLICATE_NAME)) throw syntaxError(err);
    compiled = compileWithoutNames(pattern, err);
  }
  return { source: pattern, test: (text) => compiled.test(text) };
}

/** Go's `(*syntax.Error).Error()` text: `error parsing regexp: <code>: `<expr>`` (expr may be empty). */
function goErrorText(code: string, expr: string): string {
  return `error parsing regexp: ${code}: \`${expr}\``;
}

function syntaxError(err: RE2JSException): RegexSyntaxError {
  const text = err instanceof RE2JSSyntaxException ? goErrorText(err.error, err.input ?? "") : err.message;
  return new RegexSyntaxError(text, { cause: err });
}

function compileWithoutNames(pattern: string, original: RE2JSException): RE2JS {
  const stripped = stripGroupNames(pattern);
  if (typeof stripped !== "string") {
    throw new RegexSyntaxError(goErrorText("invalid named capture", stripped.invalidCapture), {
      cause: original,
    });
  }
  try {
    return RE2JS.compile(stripped);
  } catch (err) {
    if (!(err instanceof RE2JSException)) throw err;
    // The stripped pattern differs from the bundle's only in group names, so Go reports the same
    // problem; where it quotes the whole pattern, quote the bundle's.
    if (err instanceof RE2JSSyntaxException && err.input === stripped) {
      throw new RegexSyntaxError(goErrorText(err.error, pattern), { cause: err });
    }
    throw syntaxError(err);
  }
}

/** Go's `isValidCaptureName`: one or more ASCII letters, digits or underscores. */
const CAPTURE_NAME = /^[A-Za-z0-9_]+$/;

/**
 * `pattern` with every `(?P<name>` / `(?<name>` turned into `(`; for a name Go refuses, the text
 * Go's error quotes (`invalid named capture`). Go accepts repeated group names and re2js does not; names never affect
 * `MatchString`, so dropping them changes nothing else. Escapes (`\x`, `\Q…\E`) and character
 * classes are skipped so that only real group openings are rewritten.
 */
export function stripGroupNames(pattern: string): string | { readonly invalidCapture: string } {
  let out = "";
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      if (pattern[i + 1] === "Q") {
        const end = pattern.indexOf("\\E", i + 2);
        const stop = end < 0 ? pattern.length : end + 2;
        out += pattern.slice(i, stop);
        i = stop;
      } else {
        out += pattern.slice(i, i + 2);
        i += 2;
      }
      continue;
    }
    if (c === "[") {
      const stop = classEnd(pattern, i);
      out += pattern.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === "(" && pattern[i + 1] === "?") {
      const open = pattern.startsWith("P<", i + 2) ? i + 4 : nameOpening(pattern, i + 2);
      if (open !== undefined) {
        const close = pattern.indexOf(">", open);
        if (close < 0) return { invalidCapture: pattern.slice(i) };
        if (!CAPTURE_NAME.test(pattern.slice(open, close))) {
          return { invalidCapture: pattern.slice(i, close + 1) };
        }
        out += "(";
        i = close + 1;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

/** Index after `<` of a `(?<name>` opening at `at` (which points past `(?`); not `(?<=` / `(?<!`. */
function nameOpening(pattern: string, at: number): number | undefined {
  if (pattern[at] !== "<") return undefined;
  const next = pattern[at + 1];
  return next === "=" || next === "!" ? undefined : at + 1;
}

/** Index just past the character class opening at `start` (or the end of the pattern). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === "^") i++;
  // A `]` right after `[` or `[^` is a literal member.
  if (pattern[i] === "]") i++;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") i += 2;
    else if (c === "[" && pattern[i + 1] === ":") {
      const end = pattern.indexOf(":]", i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else if (c === "]") return i + 1;
    else i++;
  }
  return pattern.length;
}
