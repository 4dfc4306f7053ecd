// @rebuno/client re-exports the models it returns and the errors it throws (one import is enough),
// and `Event` is a union discriminated by `type`, so payload fields are typed after a check.
import * as protocol from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import * as client from "../src/index.js";
import { Client, type Event, NotFoundError, RebunoError, type StepEvent } from "../src/index.js";
import { type FakeKernel, startFakeKernel, wireEvent } from "./fake-kernel.js";
import { quietLogger } from "./helpers.js";

const ERRORS = [
  "APIError",
  "Blocked",
  "CheckpointUnavailable",
  "ConfigurationError",
  "ConflictError",
  "ForbiddenError",
  "InternalError",
  "KernelError",
  "LeaseSuperseded",
  "NetworkError",
  "NotFoundError",
  "NotSupportedByKernel",
  "PolicyError",
  "RateLimited",
  "RebunoError",
  "RecordingError",
  "Terminated",
  "TimeoutError",
  "ToolError",
  "TransportError",
  "UnauthorizedError",
  "UnexpectedResponse",
  "ValidationError",
] as const;

let kernel: FakeKernel;
beforeEach(async () => {
  kernel = await startFakeKernel();
});
afterEach(() => kernel.close());

describe("@rebuno/client re-exports", () => {
  it("every error class of @rebuno/protocol, the same class (instanceof works across imports)", () => {
    const clientExports: Record<string, unknown> = { ...client };
    const protocolExports: Record<string, unknown> = { ...protocol };
    for (const name of ERRORS) expect(clientExports[name], name).toBe(protocolExports[name]);
    // And the list is complete: every Error subclass @rebuno/protocol exports is in it.
    const protocolErrors = Object.entries(protocolExports)
      .filter(([, value]) => typeof value === "function" && value.prototype instanceof Error)
      .map(([name]) => name);
    expect([...protocolErrors].sort()).toEqual([...ERRORS].sort());
  });

  it("a kernel error caught from the client is one of the re-exported classes", async () => {
    kernel.reply({ status: 404, json: { code: "not_found", message: "not found: execution" } });
    const c = new Client({ baseUrl: kernel.url, apiKey: "k", logger: quietLogger() });
    const error = await c.get("missing").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toBeInstanceOf(RebunoError);
  });

  it("events are typed by `type`", async () => {
    const executionId = "0192f1a0-0000-7000-8000-000000000000";
    const succeeded = { ...wireEvent(2, "step.succeeded"), payload: { step_id: "s-1", target: "greet" } };
    kernel.reply({ status: 200, json: [wireEvent(1, "execution.created"), succeeded] });
    const c = new Client({ baseUrl: kernel.url, apiKey: "k", logger: quietLogger() });
    const events: Event[] = await c.events(executionId);
    const stepIds: string[] = [];
    for (const event of events) {
      if (event.type === "step.succeeded") {
        expectTypeOf(event).toEqualTypeOf<StepEvent>();
        expectTypeOf(event.payload.step_id).toEqualTypeOf<string>();
        stepIds.push(event.payload.step_id);
      }
    }
    expect(stepIds).toEqual(["s-1"]);
    expectTypeOf<Event["type"]>().toEqualTypeOf<client.EventType>();
    expect(client.EVENT_TYPES).toContain("step.succeeded");
  });
});
