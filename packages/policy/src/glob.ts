/**
 * Target globs (docs/protocol.md §9.3): Go `path.Match` syntax, except that `*` and `?` also match `/`
 * (the newest kernel's semantics; the Aug snapshot stopped `*` at `/`).
 *
 * Grammar, as in Go:
 *
 * ```text
 * pattern  = { term }
 * term     = '*'                      any sequence of characters (including '/')
 *          | '?'                      any single character (including '/')
 *          | '[' [ '^' ] { range } ']' character class (must be non-empty)
 *          | c                        c itself (c != '*', '?', '\\', '[')
 *          | '\\' c                   c itself
 * range    = c | '\\' c | lo '-' hi   (c != '\\', '-', ']')
 * ```
 *
 * Only `^` negates a class: Go's `path.Match` treats `[!a]` as the set {`!`, `a`}, and we keep
 * that so a bundle means the same thing here as on the production kernel. Malformed patterns
 * (unclosed `[`, empty class, dangling `\`, `-` or `]` where a character is required) are rejected
 * when the bundle is compiled instead of silently never matching at run time.
 *
 * Matching is by Unicode code point, like Go's rune-based matcher.
 */

/** One parsed glob term. */
type GlobToken =
  | { readonly kind: "star" }
  | { readonly kind: "any" }
  | { readonly kind: "literal"; readonly cp: number }
  | {
      readonly kind: "class";
      readonly negated: boolean;
      readonly ranges: readonly (readonly [number, number])[];
    };

/** A compiled glob: `test(name)` is true for an exact match or a pattern match. */
export interface Glob {
  readonly pattern: string;
  test(name: string): boolean;
}

/** Thrown by {@link compileGlob} for a malformed pattern (message only, no prefix). */
export class GlobSyntaxError extends Error {
  static {
    GlobSyntaxError.prototype.name = "GlobSyntaxError";
  }
}

/**
 * Parses `pattern` once so matching never has to deal with syntax errors.
 *
 * @throws GlobSyntaxError when the pattern is malformed under Go `path.Match` rules.
 */
export function compileGlob(pattern: string): Glob {
  const tokens = parseGlob(pattern);
  return {
    pattern,
    // Exact equality first: the spec lists it separately, and it is the common case.
    test: (name) => name === pattern || matchTokens(tokens, Array.from(name, cpOf)),
  };
}

function cpOf(ch: string): number {
  return ch.codePointAt(0) ?? 0;
}

function parseGlob(pattern: string): GlobToken[] {
  const cps = Array.from(pattern, cpOf);
  const tokens: GlobToken[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new GlobSyntaxError(`malformed glob ${JSON.stringify(pattern)}: ${why}`);
  };
  // Reads one class character, honouring `\` escapes; Go rejects an unescaped '-' or ']' here.
  const classChar = (): number => {
    const c = cps[i];
    if (c === undefined) return fail("unterminated character class");
    if (c === 0x2d /* - */ || c === 0x5d /* ] */) {
      return fail(`unexpected ${String.fromCodePoint(c)} in character class`);
    }
    if (c === 0x5c /* \ */) {
      const next = cps[i + 1];
      if (next === undefined) return fail("trailing backslash");
      i += 2;
      return next;
    }
    i += 1;
    return c;
  };

  while (i < cps.length) {
    const c = cps[i] as number;
    if (c === 0x2a /* * */) {
      // Consecutive stars are equivalent to one and collapsing them keeps matching linear-ish.
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
      i += 1;
    } else if (c === 0x3f /* ? */) {
      tokens.push({ kind: "any" });
      i += 1;
    } else if (c === 0x5c /* \ */) {
      const next = cps[i + 1];
      if (next === undefined) fail("trailing backslash");
      tokens.push({ kind: "literal", cp: next as number });
      i += 2;
    } else if (c === 0x5b /* [ */) {
      i += 1;
      let negated = false;
      if (cps[i] === 0x5e /* ^ */) {
        negated = true;
        i += 1;
      }
      const ranges: [number, number][] = [];
      for (;;) {
        if (cps[i] === 0x5d /* ] */ && ranges.length > 0) {
          i += 1;
          break;
        }
        const lo = classChar();
        let hi = lo;
        if (cps[i] === 0x2d /* - */) {
          i += 1;
          hi = classChar();
        }
        ranges.push([lo, hi]);
      }
      tokens.push({ kind: "class", negated, ranges });
    } else {
      tokens.push({ kind: "literal", cp: c });
      i += 1;
    }
  }
  return tokens;
}

function matchOne(token: GlobToken, cp: number): boolean {
  switch (token.kind) {
    case "any":
      return true;
    case "literal":
      return token.cp === cp;
    case "class": {
      // Like Go, a reversed range such as `[z-a]` is legal and simply matches nothing.
      const inClass = token.ranges.some(([lo, hi]) => lo <= cp && cp <= hi);
      return inClass !== token.negated;
    }
    case "star":
      return false;
  }
}

/**
 * Classic wildcard matching with single-star backtracking: when a later star is met, earlier
 * stars never need to be revisited, so this is O(|pattern| · |name|) in the worst case.
 */
function matchTokens(tokens: readonly GlobToken[], name: readonly number[]): boolean {
  let t = 0;
  let n = 0;
  let starT = -1;
  let starN = 0;
  while (n < name.length) {
    const tok = tokens[t];
    if (tok !== undefined && tok.kind === "star") {
      starT = t;
      starN = n;
      t += 1;
    } else if (tok !== undefined && matchOne(tok, name[n] as number)) {
      t += 1;
      n += 1;
    } else if (starT >= 0) {
      t = starT + 1;
      starN += 1;
      n = starN;
    } else {
      return false;
    }
  }
  while (tokens[t]?.kind === "star") t += 1;
  return t === tokens.length;
}
