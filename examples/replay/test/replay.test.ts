/**
 * The checked-in recording replayed offline: no kernel, no provider (the model's fetch throws if
 * reached). The unchanged assistant follows it; a code change that sends a different argument to
 * a tool is reported at that step with both argument sets.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseRecording } from "@rebuno/protocol";
import { assertFollowsRecording, formatReplayReport, replayRecording } from "@rebuno/testing";
import { describe, expect, it } from "vitest";
import { type Order, ShopAssistant } from "../agent.js";
import { recordOrder } from "../record.js";

const FILE = fileURLToPath(new URL("../recordings/order-tea.json", import.meta.url));
const OFFLINE = { secret: "offline", baseUrl: "http://127.0.0.1:1" };
const noProvider: typeof fetch = async () => {
  throw new Error("the model was called during an offline replay");
};

describe("examples/replay", () => {
  it("the assistant follows its recording offline", async () => {
    // #region replay-follow
    const recording = readFileSync(FILE, "utf8");
    const result = await replayRecording(new ShopAssistant(OFFLINE, noProvider), recording);
    assertFollowsRecording(result); // throws ReplayDivergenceError with the report otherwise
    // #endregion
    expect(formatReplayReport(result)).toBe("followed the recording (4 steps replayed)");
    expect(result.outcome).toEqual({
      status: "completed",
      output: parseRecording(recording).execution.output,
    });
  });

  it("a changed tool argument is reported at that step, with both argument sets", async () => {
    // #region replay-diverge
    class ChangedAssistant extends ShopAssistant {
      protected override stockQuery(order: Order) {
        return { sku: order.sku.toUpperCase() }; // the code change
      }
    }
    const result = await replayRecording(
      new ChangedAssistant(OFFLINE, noProvider),
      readFileSync(FILE, "utf8"),
    );
    expect(result.followed).toBe(false);
    expect(formatReplayReport(result)).toBe(
      [
        "the replay left the recording:",
        "  submission #1 is not in the recording",
        '    recorded:  tool_call check_stock {"sku":"tea"}',
        '    submitted: tool_call check_stock {"sku":"TEA"}',
        '    args $.sku: "tea" → "TEA"',
        "  4 recorded step(s) never reached:",
        '    tool_call check_stock {"sku":"tea"}',
        '    llm_call gpt-4o-mini {"model":"gpt-4o-mini","messages":[{"role":"user","content":"A customer wants 2 × tea; 12 in stock. …',
        '    tool_call place_order {"sku":"tea","quantity":2}',
        '    llm_call gpt-4o-mini {"model":"gpt-4o-mini","messages":[{"role":"user","content":"A customer wants 2 × tea; 12 in stock. …',
        '  outcome: recorded completed "Done: {\\"orderId\\":\\"ord-tea-2\\",\\"sku\\":\\"tea\\",\\"quantity\\":2}", replayed stopped',
      ].join("\n"),
    );
    // #endregion
  });

  it("the checked-in recording is what record.ts writes today (same steps, args, results, output)", async () => {
    const fresh = await recordOrder();
    const checkedIn = parseRecording(readFileSync(FILE, "utf8"));
    const shape = (r: typeof fresh) => ({
      steps: r.steps.map((s) => [
        s.kind,
        s.target,
        s.status,
        s.kind === "llm_call" ? null : s.args,
        s.result,
      ]),
      output: r.execution.output,
    });
    expect(shape(fresh)).toEqual(shape(checkedIn));
  });
});
