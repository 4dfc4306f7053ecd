import { describe, expect, it } from "vitest";
import { compileGlob, GlobSyntaxError } from "../src/index.js";

const run = (pattern: string, name: string): boolean | "bad" => {
  try {
    return compileGlob(pattern).test(name);
  } catch (err) {
    expect(err).toBeInstanceOf(GlobSyntaxError);
    return "bad";
  }
};

/**
 * [pattern, name, Go path.Match result or "bad" for ErrBadPattern], generated with Go 1.26. Names
 * contain no '/', where the newest semantics and path.Match agree.
 */
const GO_PATH_MATCH: [string, string, boolean | "bad"][] = [
  ["abc", "abc", true],
  ["a*", "abc", true],
  ["a*c", "abbbc", true],
  ["a?c", "abc", true],
  ["a?c", "ac", false],
  ["[abc]", "b", true],
  ["[^abc]", "b", false],
  ["[^abc]", "d", true],
  ["[!a]", "!", true],
  ["[!a]", "b", false],
  ["[a-c]", "b", true],
  ["[a-c]", "d", false],
  ["[\\]]", "]", true],
  ["\\*", "*", true],
  ["\\*", "a", false],
  ["[", "a", "bad"],
  ["[]", "a", "bad"],
  ["[^]", "a", "bad"],
  ["[a-]", "a", "bad"],
  ["[-a]", "a", "bad"],
  ["a\\", "a", "bad"],
  ["[a", "a", "bad"],
  ["[\\", "a", "bad"],
  ["*[", "abc", "bad"],
  ["[z-a]", "m", false],
  ["[]a]", "]", "bad"],
  ["x[a-c-e]", "xb", "bad"],
  ["[a-b-c]", "a", "bad"],
  ["ä?", "äö", true],
  ["[α-ω]", "β", true],
  ["*x*", "yyxyy", true],
  ["a*b*c", "aXbYc", true],
  ["a*b*c", "aXbY", false],
  ["**", "anything", true],
  ["[\\-]", "-", true],
  ["[a\\-z]", "-", true],
  ["[a^]", "^", true],
  ["a]b", "a]b", true],
];

describe("compileGlob", () => {
  it.each(GO_PATH_MATCH)("%j vs %j → %j (same as Go path.Match)", (pattern, name, expected) => {
    expect(run(pattern, name)).toBe(expected);
  });

  it("'*' and '?' match any character including '/' (newest kernel)", () => {
    expect(run("mcp/*", "mcp/fs/write")).toBe(true);
    expect(run("*", "a/b/c")).toBe(true);
    expect(run("a?b", "a/b")).toBe(true);
    expect(run("db/*/read", "db/x/y/read")).toBe(true);
    expect(run("db/*/read", "db/x/y/write")).toBe(false);
    expect(run("*/read", "read")).toBe(false);
  });

  it("classes can match '/' too", () => {
    expect(run("a[/]b", "a/b")).toBe(true);
    expect(run("a[^x]b", "a/b")).toBe(true);
  });

  it("exact equality always matches", () => {
    expect(run("weird[name", "weird[name")).toBe("bad"); // malformed patterns are refused at load
    expect(run("a*", "a*")).toBe(true);
  });

  it("'!' is literal in classes, as in Go; only '^' negates", () => {
    expect(run("[!x]", "y")).toBe(false);
    expect(run("[!x]", "!")).toBe(true);
    expect(run("[^x]", "y")).toBe(true);
  });

  it("matches by code point", () => {
    expect(run("?", "😀")).toBe(true);
    expect(run("[😀-😂]", "😁")).toBe(true);
  });

  it("many stars stay fast", () => {
    const t = Date.now();
    expect(run("*a*a*a*a*a*a*a*b", "a".repeat(5000))).toBe(false);
    expect(Date.now() - t).toBeLessThan(1000);
  });
});
