import { describe, expect, it } from "vitest";
import {
  computeStepId,
  HEADER_AGENT_ID,
  HEADER_DISPATCH_ATTEMPT,
  HEADER_DISPATCH_ID,
  HEADER_EXECUTION_ID,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  isTimestampWithinWindow,
  requestSigningMessage,
  SIGNATURE_CLOCK_WINDOW_SECONDS,
  signRequest,
  verifyRequestSignature,
} from "../src/index.js";

describe("signing helpers", () => {
  it("pins the header names and the clock window", () => {
    expect([
      HEADER_AGENT_ID,
      HEADER_TIMESTAMP,
      HEADER_DISPATCH_ID,
      HEADER_DISPATCH_ATTEMPT,
      HEADER_SIGNATURE,
      HEADER_EXECUTION_ID,
    ]).toEqual([
      "Rebuno-Agent-Id",
      "Rebuno-Timestamp",
      "Rebuno-Dispatch-Id",
      "Rebuno-Dispatch-Attempt",
      "Rebuno-Signature",
      "Rebuno-Execution-Id",
    ]);
    expect(SIGNATURE_CLOCK_WINDOW_SECONDS).toBe(300);
  });

  it("accepts numeric timestamp and attempt, and byte bodies", () => {
    const base = { method: "POST", target: "/v0/x", dispatchId: "d", body: "{}" };
    const asText = signRequest({ ...base, secret: "s", timestamp: "1700000000", dispatchAttempt: "3" });
    const asNumbers = signRequest({ ...base, secret: "s", timestamp: 1700000000, dispatchAttempt: 3 });
    const asBytes = signRequest({
      ...base,
      secret: Buffer.from("s"),
      timestamp: 1700000000,
      dispatchAttempt: 3,
      body: new TextEncoder().encode("{}"),
    });
    expect(asNumbers).toBe(asText);
    expect(asBytes).toBe(asText);
    expect(asText).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(
      requestSigningMessage({
        method: "GET",
        target: "/v0/y",
        timestamp: 1,
        body: new Uint8Array(),
      }).toString(),
    ).toBe("rebuno-request-v1\nGET\n/v0/y\n1\n\n\n");
  });

  it("rejects missing or malformed signatures", () => {
    const input = { secret: "s", method: "GET", target: "/v0/y", timestamp: "1", body: "" };
    const good = signRequest(input);
    expect(verifyRequestSignature({ ...input, signature: good })).toBe(true);
    expect(verifyRequestSignature({ ...input, signature: undefined })).toBe(false);
    expect(verifyRequestSignature({ ...input, signature: null })).toBe(false);
    expect(verifyRequestSignature({ ...input, signature: good.replace("v1=", "sha256=") })).toBe(false);
    expect(verifyRequestSignature({ ...input, signature: `${good}0` })).toBe(false);
    expect(verifyRequestSignature({ ...input, signature: "v1=" })).toBe(false);
    expect(verifyRequestSignature({ ...input, dispatchId: "d", signature: good })).toBe(false);
  });

  it("checks the timestamp window inclusively, parsing like Go strconv.ParseInt", () => {
    const now = 1_700_000_000;
    expect(isTimestampWithinWindow("1700000000", now)).toBe(true);
    expect(isTimestampWithinWindow("1700000300", now)).toBe(true);
    expect(isTimestampWithinWindow("1699999700", now)).toBe(true);
    expect(isTimestampWithinWindow("1700000301", now)).toBe(false);
    expect(isTimestampWithinWindow("1699999699", now)).toBe(false);
    expect(isTimestampWithinWindow("+1700000000", now)).toBe(true);
    expect(isTimestampWithinWindow("1700000000.5", now)).toBe(false);
    expect(isTimestampWithinWindow(" 1700000000", now)).toBe(false);
    expect(isTimestampWithinWindow("", now)).toBe(false);
    expect(isTimestampWithinWindow("99999999999999999999", now)).toBe(false);
    expect(isTimestampWithinWindow("1700000010", now, 5)).toBe(false);
    expect(isTimestampWithinWindow("1700000000", now + 0.9)).toBe(true);
  });
});

describe("computeStepId", () => {
  it("length-prefixes by UTF-8 bytes and validates the occurrence", () => {
    const a = computeStepId("e", "tool_call", "é", "h", 0);
    const b = computeStepId("e", "tool_call", "e", "h", 0);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(() => computeStepId("e", "tool_call", "t", "h", -1)).toThrow(RangeError);
    expect(() => computeStepId("e", "tool_call", "t", "h", 1.5)).toThrow(RangeError);
  });
});
