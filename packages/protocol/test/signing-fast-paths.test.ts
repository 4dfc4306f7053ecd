// The signing fast paths must answer exactly like the straightforward code they replaced:
// HMAC-SHA256 from two one-shot hashes vs `createHmac`, the double-precision timestamp window vs
// the BigInt one, and the JS constant-time compare vs Buffer + `timingSafeEqual`.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  isTimestampWithinWindow,
  signRequest,
  verifyRequestSignature,
  verifyWebhookSignature,
  webhookSignature,
} from "../src/index.js";

function referenceHead(input: {
  method: string;
  target: string;
  timestamp: string | number;
  dispatchId?: string | undefined;
  dispatchAttempt?: string | number | undefined;
}): string {
  return (
    `rebuno-request-v1\n${input.method}\n${input.target}\n${input.timestamp}\n` +
    `${input.dispatchId ?? ""}\n${input.dispatchAttempt ?? ""}\n`
  );
}

const TEXT_SECRETS = [
  "",
  "s",
  "bench-secret",
  "é",
  "秘密",
  "\ud800x",
  "k".repeat(64),
  "k".repeat(65),
  "k".repeat(300),
];
// Around the one-shot limit (16 KiB of header + body) and the 64-byte HMAC block.
const BODY_SIZES = [0, 1, 63, 64, 65, 190, 16 * 1024 - 200, 16 * 1024 - 100, 16 * 1024, 70_000];

describe("HMAC-SHA256 fast path", () => {
  it("equals createHmac for text and byte secrets of every length class, text and byte bodies", () => {
    let n = 0;
    for (const size of BODY_SIZES) {
      const bytes = randomBytes(size);
      // Multi-byte text, plus a lone surrogate (UTF-8 encodes it as U+FFFD in both paths).
      const text = `${"ü".repeat(size >> 1)}${size % 2 ? "\udc00" : ""}`;
      const secrets = [...TEXT_SECRETS, randomBytes(10), randomBytes(64), randomBytes(100)];
      for (const secret of secrets) {
        for (const body of [bytes, text]) {
          const input = {
            method: "POST",
            target: `/v0/executions/${n}/steps?x=é`,
            timestamp: 1_700_000_000 + n,
            dispatchId: n % 2 ? "0192" : undefined,
            dispatchAttempt: n % 2 ? n : undefined,
            body,
          };
          const want = createHmac("sha256", secret).update(referenceHead(input), "utf8").update(body);
          expect(signRequest({ ...input, secret })).toBe(`v1=${want.digest("hex")}`);
          const hook = createHmac("sha256", secret).update(body).digest("hex");
          expect(webhookSignature(secret, body)).toBe(`sha256=${hook}`);
          expect(verifyWebhookSignature(secret, body, `sha256=${hook}`)).toBe(true);
          n++;
        }
      }
    }
  });

  it("keeps answering correctly when many secrets cycle through its pad cache", () => {
    for (let i = 0; i < 600; i++) {
      const secret = `secret-${i % 300}`;
      const body = `{"n":${i}}`;
      const want = createHmac("sha256", secret).update(body).digest("hex");
      expect(webhookSignature(secret, body)).toBe(`sha256=${want}`);
    }
  });
});

describe("signature comparison", () => {
  const input = { secret: "s", method: "POST", target: "/v0/y", timestamp: "1", body: "{}" };
  const good = signRequest(input);

  it("refuses any change of one character, of the case, or of the length", () => {
    for (let i = 3; i < good.length; i++) {
      const c = good[i] === "0" ? "1" : "0";
      expect(verifyRequestSignature({ ...input, signature: good.slice(0, i) + c + good.slice(i + 1) })).toBe(
        false,
      );
    }
    const upper = `v1=${good.slice(3).toUpperCase()}`;
    if (upper !== good) expect(verifyRequestSignature({ ...input, signature: upper })).toBe(false);
    expect(verifyRequestSignature({ ...input, signature: good.slice(0, -1) })).toBe(false);
  });

  it("refuses non-ASCII text, including text whose UTF-8 length matches", () => {
    // "é" is two UTF-8 bytes: dropping two hex digits for it keeps the byte length.
    const sameBytes = `${good.slice(0, -2)}é`;
    expect(Buffer.byteLength(sameBytes)).toBe(Buffer.byteLength(good));
    expect(verifyRequestSignature({ ...input, signature: sameBytes })).toBe(false);
    const sameUnits = `${good.slice(0, -1)}é`;
    expect(sameUnits.length).toBe(good.length);
    expect(verifyRequestSignature({ ...input, signature: sameUnits })).toBe(false);
  });
});

// The exact rule the fast path must reproduce (Go strconv.ParseInt, then an inclusive window).
function referenceWindow(timestamp: string, nowSeconds: number, windowSeconds = 300): boolean {
  if (!/^[+-]?\d{1,19}$/.test(timestamp)) return false;
  const ts = BigInt(timestamp);
  if (ts > 9223372036854775807n || ts < -9223372036854775808n) return false;
  const now = BigInt(Math.floor(nowSeconds));
  const w = BigInt(windowSeconds);
  return ts >= now - w && ts <= now + w;
}

describe("timestamp window fast path", () => {
  it("agrees with the BigInt rule on boundaries, signs, lengths and odd clocks", () => {
    const nows = [1_700_000_000, 1_700_000_000.999, 0, 299, -5, 999_999_999_999_999, 2 ** 53 - 1, 2 ** 60];
    const windows = [300, 0, 5, 1e15];
    const stamps = [
      "1700000000",
      "1700000300",
      "1700000301",
      "1699999700",
      "1699999699",
      "+1700000000",
      "-1",
      "0",
      "00001700000000",
      "999999999999999",
      "1000000000000000",
      "9007199254740993",
      "9223372036854775807",
      "9223372036854775808",
      "",
      "1e9",
      " 1",
      "1 ",
      "１",
    ];
    for (const now of nows) {
      for (const w of windows) {
        for (const ts of [...stamps, String(Math.floor(now)), String(Math.floor(now) + w)]) {
          expect(isTimestampWithinWindow(ts, now, w), `${ts} @ ${now} ± ${w}`).toBe(
            referenceWindow(ts, now, w),
          );
        }
      }
    }
  });
});
