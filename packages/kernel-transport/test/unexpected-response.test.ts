/**
 * Issue 10 #15: a 2xx answer that is not what the route returns (not JSON, or JSON of the wrong
 * shape) is an `UnexpectedResponse` with the real status and a body excerpt — never a
 * `ValidationError` with status 400, which would blame the request.
 */
import { parseExecution, UnexpectedResponse, ValidationError } from "@rebuno/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type AgentTransport,
  createAgentTransport,
  createHttpCore,
  SubmissionOutcomeUnknown,
} from "../src/index.js";
import { AGENT, LEASE, memoryLogger, SECRET } from "./helpers/fixtures.js";
import { type Action, EXEC_ID, STEP_ID, type StubKernel, startStubKernel } from "./helpers/stub-kernel.js";

let kernel: StubKernel;
let answer: Action | undefined;

beforeEach(async () => {
  answer = undefined;
  kernel = await startStubKernel({ secret: SECRET, route: () => answer });
});
afterEach(() => kernel.close());

const HTML = "<html><body>502 from the proxy, but sent as 200</body></html>";

function expectUnexpected(err: unknown, status: number, excerptStart: string): void {
  expect(err).toBeInstanceOf(UnexpectedResponse);
  expect(err).not.toBeInstanceOf(ValidationError);
  expect(err).toMatchObject({ code: "invalid_response", status, retryable: false });
  expect((err as UnexpectedResponse).excerpt.startsWith(excerptStart)).toBe(true);
  expect((err as UnexpectedResponse).excerpt.length).toBeLessThanOrEqual(UnexpectedResponse.EXCERPT_CHARS);
  expect((err as Error).message).toContain(`(${status}, `);
}

describe.each(["undici", "fetch"] as const)("agent transport over %s", (engine) => {
  let t: AgentTransport;
  beforeEach(() => {
    t = createAgentTransport({
      baseUrl: kernel.url,
      agentId: AGENT,
      secret: SECRET,
      logger: memoryLogger(),
      ...(engine === "fetch" ? { fetch: (r: Request) => fetch(r) } : {}),
    });
  });
  afterEach(() => t.close());

  it("a 200 that is not JSON: UnexpectedResponse with status and excerpt", async () => {
    answer = { status: 200, text: HTML };
    expectUnexpected(await t.getExecution(EXEC_ID).catch((e: unknown) => e), 200, "<html>");
  });

  it("a 200 of the wrong shape (execution): UnexpectedResponse, not ValidationError 400", async () => {
    answer = { status: 200, json: { hello: "proxy" } };
    const err = await t.getExecution(EXEC_ID).catch((e: unknown) => e);
    expectUnexpected(err, 200, '{"hello":"proxy"}');
    expect((err as Error).cause).toBeInstanceOf(ValidationError); // the parser's finding, kept
  });

  it("a 203 of the wrong shape (step outcome) keeps the real status", async () => {
    answer = { status: 203, json: { nope: 1 } };
    const err = await t.completeStep(EXEC_ID, LEASE, STEP_ID, { result: 1 }).catch((e: unknown) => e);
    expectUnexpected(err, 203, '{"nope":1}');
  });

  it("a step list that is not an array, and a suspend answer without the flag", async () => {
    answer = { status: 200, json: { steps: [] } };
    expectUnexpected(await t.listSteps(EXEC_ID).catch((e: unknown) => e), 200, "{");
    answer = { status: 200, json: { suspended: "yes" } };
    expectUnexpected(await t.suspend(EXEC_ID, LEASE).catch((e: unknown) => e), 200, "{");
  });

  it("an unreadable 2xx to a submission: the outcome is unknown, caused by the UnexpectedResponse", async () => {
    answer = { status: 200, text: HTML };
    const err = await t
      .submitStep(EXEC_ID, LEASE, { kind: "tool_call", target: "x", args: {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubmissionOutcomeUnknown);
    expectUnexpected((err as Error).cause, 200, "<html>");
  });
});

describe("HTTP core (shared with @rebuno/client)", () => {
  it("requestJson with a model: a 200 of the wrong shape is an UnexpectedResponse, not ValidationError 400", async () => {
    const bearer = await startStubKernel({ secret: undefined, route: () => ({ status: 200, json: ["x"] }) });
    const core = createHttpCore({ baseUrl: bearer.url, logger: memoryLogger() });
    try {
      const err = await core
        .requestJson({ method: "GET", path: `/v0/executions/${EXEC_ID}` }, parseExecution)
        .catch((e: unknown) => e);
      expectUnexpected(err, 200, '["x"]');
      expect((err as Error).cause).toBeInstanceOf(ValidationError);
      // The same call without a model hands the caller the raw JSON.
      expect(await core.requestJson({ method: "GET", path: `/v0/executions/${EXEC_ID}` })).toEqual(["x"]);
    } finally {
      await core.close();
      await bearer.close();
    }
  });

  it("requestJson on a 201 that is not JSON reports 201 and the excerpt", async () => {
    const bearer = await startStubKernel({
      secret: undefined, // bearer routes: no signature check
      route: () => ({ status: 201, text: `not json ${"x".repeat(500)}` }),
    });
    const core = createHttpCore({ baseUrl: bearer.url, logger: memoryLogger() });
    try {
      const err = await core
        .requestJson({ method: "POST", path: "/v0/executions", body: "{}" })
        .catch((e) => e);
      expectUnexpected(err, 201, "not json xxx");
      expect((err as UnexpectedResponse).excerpt).toHaveLength(UnexpectedResponse.EXCERPT_CHARS);
    } finally {
      await core.close();
      await bearer.close();
    }
  });
});
