import { describe, expect, it } from "vitest";
import { parseStreamFrame, SseDecoder, StreamSequencer } from "../src/sse.js";

const enc = new TextEncoder();

function decodeAll(chunks: (string | Uint8Array)[]): string[] {
  const d = new SseDecoder();
  const out = chunks.flatMap((c) => d.push(c).map((m) => m.data));
  d.end();
  return out;
}

describe("SseDecoder", () => {
  it("decodes data frames and skips keep-alive comments", () => {
    expect(decodeAll([': keep-alive\n\ndata: {"a":1}\n\n: keep-alive\n\ndata: two\n\n'])).toEqual([
      '{"a":1}',
      "two",
    ]);
  });

  it("gives the same messages for every split point of the input", () => {
    const text = 'data: {"step_id":"s","seq":0,"data":"héllo ✓"}\r\n\r\n: keep-alive\r\rdata: x\n\n';
    const bytes = enc.encode(text);
    const whole = decodeAll([bytes]);
    expect(whole).toEqual(['{"step_id":"s","seq":0,"data":"héllo ✓"}', "x"]);
    // Every split point, including inside the multi-byte characters and between \r and \n.
    for (let i = 1; i < bytes.length; i++) {
      expect(decodeAll([bytes.slice(0, i), bytes.slice(i)])).toEqual(whole);
    }
    // One byte at a time.
    expect(decodeAll([...bytes].map((b) => Uint8Array.of(b)))).toEqual(whole);
  });

  it("treats a \\r at the end of a chunk followed by \\n as one line break", () => {
    const d = new SseDecoder();
    expect(d.push("data: a\r")).toEqual([]);
    // Had the \n started a new (empty) line, `a` would be dispatched here without its second line.
    expect(d.push("\ndata: b\r")).toEqual([]);
    expect(d.push("\n\r\n").map((m) => m.data)).toEqual(["a\nb"]);
  });

  it("joins multi-line data, keeps event and id, strips only one leading space", () => {
    const d = new SseDecoder();
    const [m] = d.push("event: delta\nid: 7\ndata:  two spaces\ndata:none\nretry: 10\n\n");
    expect(m).toEqual({ event: "delta", data: " two spaces\nnone", lastEventId: "7" });
  });

  it("drops an unterminated final frame and frames without data", () => {
    const d = new SseDecoder();
    expect(d.push("event: x\n\ndata: partial")).toEqual([]);
    d.end();
    expect(d.push("data: next\n\n").map((m) => m.data)).toEqual(["next"]);
  });
});

describe("StreamSequencer", () => {
  it("reports gaps per step, including a late join, and passes duplicates through", () => {
    const s = new StreamSequencer();
    expect(s.accept({ stepId: "a", seq: 0, data: "x" })).toEqual({ stepId: "a", seq: 0, data: "x" });
    expect(s.accept({ stepId: "b", seq: 3, data: "y" }).gap).toEqual({ expectedSeq: 0, missed: 3 });
    expect(s.accept({ stepId: "a", seq: 1, data: "x" }).gap).toBeUndefined();
    expect(s.accept({ stepId: "a", seq: 4, data: "x" }).gap).toEqual({ expectedSeq: 2, missed: 2 });
    expect(s.accept({ stepId: "a", seq: 2, data: "late" })).toEqual({ stepId: "a", seq: 2, data: "late" });
    expect(s.accept({ stepId: "a", seq: 5, data: "x" }).gap).toBeUndefined();
    expect(s.accept({ stepId: "b", seq: 4, data: "y" }).gap).toBeUndefined();
  });
});

describe("parseStreamFrame", () => {
  it("accepts the kernel frame shape and rejects anything else", () => {
    expect(parseStreamFrame('{"step_id":"s","seq":2,"data":"d","extra":1}')).toEqual({
      stepId: "s",
      seq: 2,
      data: "d",
    });
    for (const bad of [
      "nope",
      "[]",
      "null",
      '{"step_id":1,"seq":0,"data":""}',
      '{"step_id":"s","seq":1.5,"data":""}',
    ]) {
      expect(parseStreamFrame(bad)).toBeUndefined();
    }
    expect(parseStreamFrame('{"step_id":"s","seq":-1,"data":""}')).toBeUndefined();
    expect(parseStreamFrame('{"step_id":"s","seq":0}')).toBeUndefined();
  });
});
