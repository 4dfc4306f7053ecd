// The tour's traces in a real backend (docs/observability.md §6): start Jaeger (in-memory storage,
// OTLP/HTTP and the query API on free loopback ports), run the built tour with OTLP export, read
// every trace back through Jaeger's HTTP query API and check that each tour execution is one trace
// holding the expected spans and attributes. Needs `pnpm build` and the Jaeger binary
// (verify/tracing-e2e/build-jaeger.sh); a missing binary fails the run, it is never skipped.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort } from "@rebuno/test-kit";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const JAEGER = process.env.JAEGER_BIN ?? join(ROOT, ".tmp", "bin", "jaeger");
const OUT = join(ROOT, ".tmp", "tracing-e2e");
const TOUR = join(ROOT, "examples", "tour", "dist", "main.js");

function jaegerConfig(ports) {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

/** Polls `check` until it returns a value (not undefined) or `ms` pass; the condition is the wait. */
async function waitFor(what, ms, check) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let jaeger;
let jaegerLog = "";
let queryUrl;
let executions; // the tour's own summary: how many executions it ran
let traces; // Jaeger's answer, one entry per trace

function run(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${cmd} exited ${code}\n${stderr}`)),
    );
  });
}

const tag = (span, key) => span.tags.find((t) => t.key === key)?.value;
const service = (trace, span) => trace.processes[span.processID]?.serviceName;

before(async () => {
  assert.ok(
    existsSync(JAEGER),
    `no Jaeger binary at ${JAEGER}: run verify/tracing-e2e/build-jaeger.sh first`,
  );
  assert.ok(existsSync(TOUR), `no built tour at ${TOUR}: run pnpm build first`);
  mkdirSync(OUT, { recursive: true });
  const ports = { otlp: await freePort(), query: await freePort(), queryGrpc: await freePort() };
  const config = join(OUT, "jaeger.yaml");
  writeFileSync(config, jaegerConfig(ports));
  jaeger = spawn(JAEGER, ["--config", config], { stdio: ["ignore", "pipe", "pipe"] });
  jaeger.stdout.on("data", (c) => (jaegerLog += c));
  jaeger.stderr.on("data", (c) => (jaegerLog += c));
  queryUrl = `http://127.0.0.1:${ports.query}`;
  await waitFor("Jaeger's query API", 60_000, async () =>
    (await fetch(`${queryUrl}/api/services`)).ok ? true : undefined,
  ).catch((error) => {
    throw new Error(`${error.message}\n${jaegerLog.slice(-3000)}`);
  });
  const stdout = await run(process.execPath, [TOUR, "--json"], {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${ports.otlp}`,
    NO_COLOR: "1",
  });
  const summary = stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .find((line) => line.type === "summary");
  executions = summary.executions;
  // Spans reach Jaeger through two batching stages: wait until every execution's trace is there
  // with its dispatch span.
  traces = await waitFor("every tour execution's trace in Jaeger", 60_000, async () => {
    const res = await fetch(`${queryUrl}/api/traces?service=rebuno-tour&limit=1000&lookback=1h`);
    const body = await res.json();
    const withExecution = body.data.filter((t) =>
      t.spans.some((s) => s.operationName.startsWith("invoke_agent ")),
    );
    return withExecution.length >= executions ? body.data : undefined;
  });
  writeFileSync(join(OUT, "traces.json"), JSON.stringify(traces, null, 2));
});

after(() => {
  jaeger?.kill("SIGTERM");
});

test("each tour execution is exactly one trace, keyed by its execution id", () => {
  const byExecution = new Map();
  for (const trace of traces) {
    const ids = new Set(trace.spans.map((s) => tag(s, "rebuno.execution.id")).filter(Boolean));
    assert.equal(ids.size, 1, `trace ${trace.traceID} holds executions ${[...ids].join(", ")}`);
    const [id] = ids;
    assert.equal(trace.traceID, id.replaceAll("-", ""), "the trace id is the execution id's 128 bits");
    assert.ok(!byExecution.has(id), `execution ${id} split over two traces`);
    byExecution.set(id, trace);
  }
  assert.equal(byExecution.size, executions, "one trace per execution the tour ran");
});

test("tool calls are execute_tool spans with the GenAI attributes, under the dispatch span", () => {
  const tools = traces.flatMap((t) => t.spans.filter((s) => s.operationName.startsWith("execute_tool ")));
  assert.ok(tools.length > 0);
  for (const span of tools) {
    assert.equal(tag(span, "gen_ai.operation.name"), "execute_tool");
    assert.equal(span.operationName, `execute_tool ${tag(span, "gen_ai.tool.name")}`);
    const decision = tag(span, "rebuno.decision");
    assert.ok(decision, `${span.operationName} has a decision`);
    if (decision !== "rate_limited") assert.match(String(tag(span, "gen_ai.tool.call.id")), /^[0-9a-f]{64}$/);
  }
});

test("the kernel's spans share the agent's trace: request, policy decision, webhook delivery", () => {
  const shop = traces.find((t) => t.spans.some((s) => s.operationName === "invoke_agent shop"));
  assert.ok(shop, "the shop execution's trace");
  const names = shop.spans.map((s) => s.operationName);
  for (const prefix of [
    "invoke_agent ",
    "execute_tool ",
    "policy ",
    "webhook deliver ",
    "kernel POST /v0/executions/:uuid/steps",
  ]) {
    assert.ok(
      names.some((n) => n.startsWith(prefix)),
      `${prefix} in ${names.join(", ")}`,
    );
  }
});

test("a denial is an error span naming the rule and its reason", () => {
  const denied = traces.flatMap((t) => t.spans).filter((s) => tag(s, "rebuno.decision") === "denied");
  assert.ok(denied.length > 0, "the tour's policy stage denies a tool");
  for (const span of denied) {
    assert.equal(tag(span, "error"), true);
    assert.ok(tag(span, "rebuno.rule.id"));
    assert.ok(tag(span, "rebuno.policy.reason"));
  }
});

test("an approval hold and the resumed dispatch are in one trace", () => {
  const held = traces.find((t) => t.spans.some((s) => tag(s, "rebuno.decision") === "awaiting_approval"));
  assert.ok(held, "the approval stage holds a step");
  const dispatches = held.spans.filter((s) => s.operationName.startsWith("invoke_agent "));
  assert.ok(dispatches.length >= 2, "the held attempt and the one after the grant");
  assert.ok(held.spans.some((s) => tag(s, "rebuno.approval.id")));
});

test("the crash stage: the replacement agent process writes into the same trace as the kernel", () => {
  const crash = traces.find((t) => t.spans.some((s) => s.operationName === "invoke_agent fulfilment"));
  assert.ok(crash, "the fulfilment execution's trace");
  const services = new Set(crash.spans.map((s) => service(crash, s)));
  assert.ok(services.has("rebuno-tour"), "kernel spans");
  assert.ok(services.has("rebuno-tour-fulfilment"), "agent child process spans");
});

test("a subagent's dispatch links back to the parent execution's trace", () => {
  const child = traces
    .flatMap((t) => t.spans)
    .find((s) => s.operationName === "invoke_agent researcher" && tag(s, "rebuno.parent.execution.id"));
  assert.ok(child, "the researcher's dispatch span");
  const parentTrace = String(tag(child, "rebuno.parent.execution.id")).replaceAll("-", "");
  assert.ok(
    child.references.some((r) => r.traceID === parentTrace),
    "a reference (OTel link) into the parent's trace",
  );
  const parentTool = traces
    .find((t) => t.traceID === parentTrace)
    ?.spans.find((s) => s.references.some((r) => r.traceID === child.traceID));
  assert.ok(parentTool, "the parent's tool span links to the child's trace");
});

test("the caller's create_execution span is in the created execution's trace, before its dispatch", () => {
  const creates = traces.flatMap((t) =>
    t.spans.filter((s) => s.operationName.startsWith("create_execution ")).map((s) => [t, s]),
  );
  const agents = new Set(creates.map(([, s]) => tag(s, "gen_ai.agent.id")));
  for (const agent of ["shop", "support", "editor", "fulfilment"])
    assert.ok(agents.has(agent), `${agent} create`);
  for (const [trace, span] of creates) {
    assert.equal(trace.traceID, String(tag(span, "rebuno.execution.id")).replaceAll("-", ""));
    assert.equal(tag(span, "span.kind"), "client");
    assert.equal(service(trace, span), "rebuno-tour");
  }
  const shop = traces.find((t) => t.spans.some((s) => s.operationName === "create_execution shop"));
  const created = shop.spans.find((s) => s.operationName === "create_execution shop");
  const firstDispatch = Math.min(
    ...shop.spans.filter((s) => s.operationName === "invoke_agent shop").map((s) => s.startTime),
  );
  assert.ok(created.startTime <= firstDispatch, "the create starts before the kernel dispatches");
});

test("print one execution's trace as Jaeger returns it (trimmed)", () => {
  const shop = traces.find((t) => t.spans.some((s) => s.operationName === "invoke_agent shop"));
  const trimmed = {
    traceID: shop.traceID,
    spans: shop.spans
      .sort((a, b) => a.startTime - b.startTime)
      .map((s) => ({
        operationName: s.operationName,
        spanID: s.spanID,
        parent: s.references.find((r) => r.refType === "CHILD_OF")?.spanID,
        service: service(shop, s),
        durationUs: s.duration,
        tags: Object.fromEntries(
          s.tags
            .filter((t) => /^(gen_ai|rebuno|error|http\.route|http\.response)/.test(t.key))
            .map((t) => [t.key, t.value]),
        ),
      })),
  };
  writeFileSync(join(OUT, "shop-trace.json"), JSON.stringify(trimmed, null, 2));
  process.stdout.write(`${JSON.stringify(trimmed, null, 2)}\n`);
  assert.ok(trimmed.spans.length > 0);
});
