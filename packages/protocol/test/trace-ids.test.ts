// The ids that put every span of an execution in one trace (src/trace-ids.ts): the agent, the
// caller and the kernel each derive them from the execution id alone.
import { describe, expect, test } from "vitest";
import { executionSpanContext, rootSpanIdOfExecution, traceIdOfExecution } from "../src/index.js";

describe("execution trace ids", () => {
  test("a UUID execution id is its own trace id; other ids hash to a non-zero one", () => {
    expect(traceIdOfExecution("01A24A32-46AA-7765-99CF-590E6439BB46")).toBe(
      "01a24a3246aa776599cf590e6439bb46",
    );
    const hashed = traceIdOfExecution("not-a-uuid");
    expect(hashed).toMatch(/^[0-9a-f]{32}$/);
    expect(hashed).not.toBe("0".repeat(32));
    expect(traceIdOfExecution("not-a-uuid")).toBe(hashed);
  });

  test("the remote parent: the trace id, the XOR of its halves as span id, sampled, remote", () => {
    const id = "01a24a32-46aa-7765-99cf-590e6439bb46";
    const parent = executionSpanContext(id);
    expect(parent).toEqual({
      traceId: traceIdOfExecution(id),
      spanId: rootSpanIdOfExecution(id),
      traceFlags: 1,
      isRemote: true,
    });
    const xor = BigInt("0x01a24a3246aa7765") ^ BigInt("0x99cf590e6439bb46");
    expect(parent.spanId).toBe(xor.toString(16).padStart(16, "0"));
  });
});
