/**
 * The two sides of the `#crypto` import and the WebCrypto signer give the same answers as the
 * node:crypto path, byte for byte: crypto-web.ts (@noble/hashes, browsers and workers) and
 * webcrypto.ts (`crypto.subtle`, the fetch engine's signer).
 */
import { createHash, createHmac } from "node:crypto";
import { loadVector } from "@rebuno/test-kit";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as nodeSide from "../src/crypto-node.js";
import * as webSide from "../src/crypto-web.js";
import { ConfigurationError } from "../src/errors.js";
import { signRequest, signRequestAsync } from "../src/signing.js";

const text = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }));
// Lone surrogates are where hand-written UTF-8 counting usually goes wrong.
const surrogates = fc.constantFrom("\ud800", "\udfff", "a\ud83d", "\ude00b", "\ud83d\ude00", "é€🙂");
const anyText = fc.oneof(
  text,
  surrogates,
  fc.tuple(text, surrogates, text).map((p) => p.join("")),
);
const secret = fc.oneof(
  fc.string({ minLength: 1, maxLength: 100 }),
  fc.uint8Array({ minLength: 1, maxLength: 100 }),
);
const body = fc.oneof(anyText, fc.uint8Array({ maxLength: 300 }));

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("crypto-web.ts matches crypto-node.ts", () => {
  it("names which implementation it is", () => {
    expect(nodeSide.CRYPTO_IMPLEMENTATION).toBe("node:crypto");
    expect(webSide.CRYPTO_IMPLEMENTATION).toBe("@noble/hashes");
  });

  it("utf8Length and utf8Bytes, lone surrogates included", () => {
    fc.assert(
      fc.property(anyText, (s) => {
        expect(webSide.utf8Length(s)).toBe(Buffer.byteLength(s, "utf8"));
        expect(nodeSide.utf8Length(s)).toBe(Buffer.byteLength(s, "utf8"));
        expect(Buffer.from(webSide.utf8Bytes(s)).equals(Buffer.from(s, "utf8"))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("sha256Hex", () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const expected = createHash("sha256").update(s, "utf8").digest("hex");
        expect(webSide.sha256Hex(s)).toBe(expected);
        expect(nodeSide.sha256Hex(s)).toBe(expected);
      }),
    );
  });

  it("hmacSha256Hex, short and long keys and bodies", () => {
    fc.assert(
      fc.property(secret, anyText, body, (key, head, msg) => {
        const expected = createHmac("sha256", key).update(head, "utf8").update(msg).digest("hex");
        expect(webSide.hmacSha256Hex(key, head, msg)).toBe(expected);
        expect(nodeSide.hmacSha256Hex(key, head, msg)).toBe(expected);
      }),
    );
  });

  it("joinBytes", () => {
    const a = new Uint8Array([1, 2]);
    const b = new Uint8Array([3]);
    expect([...webSide.joinBytes(a, b)]).toEqual([1, 2, 3]);
    expect([...nodeSide.joinBytes(a, b)]).toEqual([1, 2, 3]);
  });
});

describe("signRequestAsync (WebCrypto)", () => {
  interface Vector {
    name: string;
    secret: string;
    method: string;
    target: string;
    timestamp: string;
    dispatch_id: string;
    dispatch_attempt: string;
    body: string;
    signature: string;
  }

  it("reproduces every shared signature vector", async () => {
    for (const v of loadVector<{ vectors: Vector[] }>("request_signature_vectors").vectors) {
      const input = {
        secret: v.secret,
        method: v.method,
        target: v.target,
        timestamp: v.timestamp,
        dispatchId: v.dispatch_id || undefined,
        dispatchAttempt: v.dispatch_attempt || undefined,
        body: v.body,
      };
      expect(await signRequestAsync(input), v.name).toBe(v.signature);
    }
  });

  it("equals the synchronous signature for any input", async () => {
    await fc.assert(
      fc.asyncProperty(secret, anyText, fc.nat(), body, async (key, target, ts, msg) => {
        const input = {
          secret: key,
          method: "POST",
          target,
          timestamp: ts,
          dispatchId: "d",
          dispatchAttempt: 2,
          body: msg,
        };
        expect(await signRequestAsync(input)).toBe(signRequest(input));
      }),
      { numRuns: 50 },
    );
  });

  it("without crypto.subtle (an http:// page that is not localhost): a ConfigurationError saying why", async () => {
    vi.stubGlobal("crypto", {});
    const err = await signRequestAsync({
      secret: "fresh-key",
      method: "GET",
      target: "/",
      timestamp: 1,
      body: "",
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/crypto\.subtle.*https:\/\/ or localhost/);
  });
});
