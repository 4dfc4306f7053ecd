// The snippet in packages/protocol/README.md comes from here (scripts/check-snippets.mjs compares them).
import { describe, expect, it } from "vitest";
import { canonicalJson, errorFromEnvelope, NotFoundError, RebunoError } from "../src/index.js";

describe("protocol README", () => {
  it("canonical JSON and typed kernel errors", () => {
    // #region readme
    // Canonical JSON: the byte-exact form the kernel hashes and signs (sorted keys, Go escaping).
    const text = canonicalJson({ b: 1, a: "<tag>" }); // '{"a":"\u003ctag\u003e","b":1}'

    // Every kernel error envelope becomes one typed error class with structured fields.
    const error = errorFromEnvelope(404, { code: "not_found", message: "execution not found" });
    if (error instanceof NotFoundError) console.warn(error.status, error.code, error.message);
    // #endregion
    expect(text).toBe('{"a":"\\u003ctag\\u003e","b":1}');
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toBeInstanceOf(RebunoError);
    expect(error.status).toBe(404);
    expect(error.code).toBe("not_found");
  });
});
