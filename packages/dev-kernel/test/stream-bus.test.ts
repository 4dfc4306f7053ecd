// The stream bus's delivery order against closing: a subscription closed while its flush is
// scheduled writes nothing more. `rebuno-dev --quiet` exited 1 under load because SIGTERM closed
// the kernel (ending every SSE response) between the terminal notice being queued and its
// setImmediate flush, which then wrote to the ended response (an unhandled "error" event).
import { describe, expect, test } from "vitest";
import { StreamBus } from "../src/stream-bus.js";

/** A sink that records like an SSE response: a write after `end()` is the error being pinned. */
function responseLikeSink() {
  const frames: string[] = [];
  const afterEnd: string[] = [];
  let ended = false;
  return {
    frames,
    afterEnd,
    end: () => {
      ended = true;
    },
    write(frame: string): boolean {
      (ended ? afterEnd : frames).push(frame);
      return true;
    },
  };
}

const nextCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));
const ID = "01920000-0000-7000-8000-000000000001";

describe("StreamBus", () => {
  test("a queued frame is delivered on the next check phase", async () => {
    const bus = new StreamBus();
    const sink = responseLikeSink();
    bus.subscribe(ID, sink);
    bus.announceTerminal(ID, "completed");
    expect(sink.frames).toEqual([]);
    await nextCheckPhase();
    expect(sink.frames).toEqual([
      `event: execution.terminal\ndata: {"execution_id":"${ID}","status":"completed"}\n\n`,
    ]);
  });

  test.each([
    ["the terminal notice", (bus: StreamBus) => bus.announceTerminal(ID, "completed")],
    ["a delta", (bus: StreamBus) => bus.publish(ID, "step-1", 0, "x")],
  ])("closed with %s queued, then ended: the scheduled flush writes nothing", async (_what, queue) => {
    const bus = new StreamBus();
    const sink = responseLikeSink();
    const subscription = bus.subscribe(ID, sink);
    queue(bus);
    // What the kernel's close() does to each open stream: unsubscribe, then end the response.
    subscription.close();
    sink.end();
    await nextCheckPhase();
    await nextCheckPhase();
    expect(sink.afterEnd).toEqual([]);
    expect(sink.frames).toEqual([]);
    expect(bus.size).toBe(0);
  });

  test("drain() after close() schedules nothing", async () => {
    const bus = new StreamBus();
    const sink = responseLikeSink();
    const subscription = bus.subscribe(ID, sink);
    bus.publish(ID, "step-1", 0, "x");
    subscription.close();
    sink.end();
    subscription.drain();
    await nextCheckPhase();
    expect(sink.afterEnd).toEqual([]);
    expect(sink.frames).toEqual([]);
  });
});
