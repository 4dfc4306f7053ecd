/**
 * The indeterminate outcome in a trace: an agent process is SIGKILLed inside an at_most_once tool
 * (child process, the crash fixture), and the redelivery reaches an agent in this process whose
 * spans go to the OpenTelemetry SDK's in-memory exporter. Its tool span is the replayed orphan:
 * decision `indeterminate`, error status, in the execution's trace.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { traceIdOfExecution } from "@rebuno/protocol";
import { Agent, Toolbox, tool } from "@rebuno/sdk";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/crash-agent.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("./fixtures/tsconfig.json", import.meta.url));
const SECRET = "crash-secret-0123456789abcdef";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

let child: ChildProcess | undefined;
let kernel: DevKernel | undefined;
let closeAgent: (() => Promise<void>) | undefined;
afterEach(async () => {
  if (child?.exitCode === null) child.kill("SIGKILL");
  await closeAgent?.();
  await kernel?.close();
});

/** The crash fixture in a child process, hanging inside its at_most_once tool. */
function startHangingAgent(kernelUrl: string): Promise<{ url: string; started: Promise<void> }> {
  child = spawn(process.execPath, ["--import", "tsx", fixture], {
    env: {
      ...process.env,
      REBUNO_URL: kernelUrl,
      REBUNO_AGENT_SECRET: SECRET,
      TOOL_MODE: "at_most_once",
      HANG: "1",
      TSX_TSCONFIG_PATH: tsconfig,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let onStarted!: () => void;
  const started = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  return new Promise((resolve, reject) => {
    child?.once("exit", (code) => reject(new Error(`crash fixture exited early (${code})`)));
    child?.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const listening = /LISTENING (\S+)\n/.exec(out);
      if (listening !== null) resolve({ url: listening[1] as string, started });
      if (out.includes("STARTED 1\n")) onStarted();
    });
  });
}

class Effects extends Toolbox {
  readonly runs: number[] = [];
  @tool("effect_once", {
    idempotency: "at_most_once",
    input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  })
  async once(args: { n: number }) {
    this.runs.push(args.n);
    return { done: args.n };
  }
}

it("a redelivered at_most_once orphan: an indeterminate, error-status execute_tool span", async () => {
  kernel = await startDevKernel({
    dispatch: { leaseTimeoutSeconds: 1, maxAttempts: 10, pollMs: 20, reapIntervalMs: 100, backoffBaseMs: 50 },
  });
  const kernelUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const first = await startHangingAgent(kernelUrl);
  kernel.registerAgent({ id: "crashy", webhookUrl: first.url, secret: SECRET });
  const client = new Client({ baseUrl: kernelUrl, apiKey: "" });
  const created = await client.create("crashy", {});
  await first.started;
  const effects = new Effects();
  const replacement = new Agent("crashy", () => effects.once({ n: 1 }), {
    secret: SECRET,
    baseUrl: kernelUrl,
    logger: { warn: () => {}, error: () => {} },
  });
  const served = await replacement.serve({ host: "127.0.0.1", port: 0 });
  closeAgent = () => served.close();
  kernel.registerAgent({ id: "crashy", webhookUrl: served.url, secret: SECRET });
  child?.removeAllListeners("exit");
  child?.kill("SIGKILL");
  const done = await client.waitForTerminal(created.id, { timeoutMs: 25_000, pollMs: 50 });
  expect(done.status).toBe("failed");
  expect(effects.runs).toEqual([]);

  const spans = exporter.getFinishedSpans();
  const tool = spans.find((s) => s.name === "execute_tool effect_once");
  expect(tool?.attributes).toMatchObject({
    "rebuno.execution.id": created.id,
    "rebuno.decision": "indeterminate",
    "rebuno.replayed": true,
    "error.type": "indeterminate",
  });
  expect(tool?.status.code).toBe(SpanStatusCode.ERROR);
  expect(tool?.events.map((e) => e.name)).toContain("exception");
  const invoke = spans.find((s) => s.name === "invoke_agent crashy");
  expect(invoke?.attributes["rebuno.dispatch.outcome"]).toBe("failed");
  for (const span of spans.filter((s) => s.attributes["rebuno.execution.id"] === created.id)) {
    expect(span.spanContext().traceId).toBe(traceIdOfExecution(created.id));
  }
}, 40_000);
