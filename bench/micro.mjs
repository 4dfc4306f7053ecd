// Micro-benchmarks B9–B11 of docs/benchmarks.md: the per-request CPU pieces of the hot path.
//
//   pnpm tsc -b && node --expose-gc bench/micro.mjs [--quick] [--check]
//
// Every comparison runs its subjects interleaved (A, B, A, B …) in short timed batches after a
// warm-up; a sample is one batch's ns per operation, so mean/p50/p99 describe batches.
//
// B9  Signing share: sign (client) + verify (server) per request, each timed on its own and
//     summed: node:crypto path (the transport's signer + the protocol's verifier) and WebCrypto
//     (subtle.sign/verify with a cached CryptoKey), against one raw UNSIGNED round trip (undici Pool → bare node:http server in a
//     child process) measured in the same run. Goal: node:crypto ≤ 5 % of the round trip.
// B10 Validation: the dev kernel's request check (zod `SubmitStepRequestSchema.parse`) on top of
//     JSON.parse of the same body, and the transport's `parseStepDecision` on top of JSON.parse of
//     a decision. Goal: the validation alone ≤ 1 × JSON.parse. Guard: a tool's JSON Schema is
//     generated once per tool (counted through a Standard-JSON-Schema wrapper), not per access,
//     per instance, per provider export or per call.
// B11 Canonical JSON (`canonicalJson`) of a 200-key object vs JSON.stringify (goal ≤ 5×), and
//     the strict `toWireJson` vs JSON.stringify on the same object and on a small tool-args object.
//     Also, without a goal, the kernel's side: `canonicalJsonText` of the same object's text and
//     `argsHashFromText` (canonical text + SHA-256, run on every step submission) of tool args.
import { fork } from "node:child_process";
import { createHmac, webcrypto } from "node:crypto";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { environment, ratio, report, round, summarize } from "./lib/stats.mjs";
import { AGENT_ID, SECRET } from "./lib/transport-harness.mjs";

const SCRIPT = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes("--quick");
const ROUNDS = QUICK ? 30 : 100;
const BATCH_MS = QUICK ? 3 : 5; // target length of one timed batch
// Results are stored here so no loop body is dead code the JIT could drop.
let sink;

// ---------------------------------------------------------------------------------------------

/** Bare server for the unsigned round trip: read the body, answer a small JSON. */
function serveBare() {
  const answer = `${JSON.stringify({ decision: "proceed", step_id: "9a3f".repeat(16) })}\n`;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
  process.on("disconnect", () => process.exit(0));
}

/**
 * Interleaved comparison. `subjects` maps name → `batch(n)`, a function that runs the operation n
 * times in its own loop (one loop per subject, so no call site is shared between subjects and
 * V8 optimizes each like a hand-written loop; sync operations are not awaited per op). Batch
 * sizes are calibrated in the warm-up so one batch lasts about BATCH_MS. Each batch records both
 * wall time and process CPU time (user + system, all threads) per op.
 *
 * Why CPU time too: on a loaded 2-vCPU machine a batch's wall time also counts the moments the
 * scheduler ran someone else, including while V8's parallel scavenger waited for its helper
 * threads, so allocation-heavy operations looked 5–10× slower by wall clock than by CPU. For a
 * CPU-bound operation the CPU time is its cost; the round trip is judged by wall time.
 */
async function compare(subjects, rounds = ROUNDS) {
  const names = Object.keys(subjects);
  const size = {};
  const wall = Object.fromEntries(names.map((n) => [n, []]));
  const cpu = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) {
    const batch = subjects[name];
    // Warm first, so the calibration below does not size batches on interpreter speed.
    for (let i = 0, t0 = Date.now(); i < 200 && Date.now() - t0 < 50; i++) await batch(1);
    for (let n = 1; ; n *= 2) {
      const t0 = process.hrtime.bigint();
      await batch(n);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (ms >= BATCH_MS / 4 || n >= 1 << 22) {
        size[name] = Math.max(1, Math.round((n * BATCH_MS) / Math.max(ms, 1e-3)));
        break;
      }
    }
    for (let i = 0; i < 5; i++) await batch(size[name]); // warm-up at the calibrated size
  }
  globalThis.gc?.();
  for (let r = 0; r < rounds; r++) {
    for (const name of names) {
      const n = size[name];
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await subjects[name](n);
      wall[name].push(Number(process.hrtime.bigint() - t0) / n);
      const c = process.cpuUsage(c0);
      cpu[name].push(((c.user + c.system) * 1000) / n);
    }
  }
  return Object.fromEntries(
    names.map((n) => [n, { ...summarize(wall[n]), cpu: summarize(cpu[n]), opsPerBatch: size[n] }]),
  );
}

function print(title, stats) {
  console.log(`\n${title} (µs per op; a sample = one batch; CPU = process CPU time per op)`);
  for (const [name, s] of Object.entries(stats)) {
    const f = (x) => String(x).padStart(9);
    console.log(
      `  ${name.padEnd(34)} wall mean ${f(s.meanUs)} p50 ${f(s.p50Us)} p99 ${f(s.p99Us)}` +
        `   CPU mean ${f(s.cpu.meanUs)} p50 ${f(s.cpu.p50Us)}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------

async function b9(protocol, transport) {
  const { Pool } = await import("undici");
  const child = fork(SCRIPT, ["--serve-bare"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const { url } = await new Promise((resolve) => child.once("message", resolve));
  const pool = new Pool(url, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 });

  const target = "/v0/executions/018f3a2b-4c5d-7e6f-8a9b-0c1d2e3f4a5b/steps";
  const lease = { dispatchId: "01920000-0000-7000-8000-000000000001", attempt: 1, timeoutMs: 120_000 };
  const bodyText =
    '{"kind":"tool_call","target":"send_email","args":{"to":"ops@example.com","subject":"weekly report",' +
    '"body":"All systems nominal.","cc":["a@b.c"]},"idempotency":"safe_to_retry","resources":[]}';
  const body = Buffer.from(bodyText);

  const rawUnsigned = async () => {
    const res = await pool.request({
      path: target,
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    JSON.parse(await res.body.text());
  };

  // node:crypto: the transport's own signer (what every agent request runs) and the protocol's
  // verifier (what a kernel built on it runs), over the same bytes. Signing happens in the agent
  // and verifying in the kernel, so each is timed on its own and the per-request cost is the sum.
  const signer = transport.createAgentSigner({ agentId: AGENT_ID, secret: SECRET });
  const ctx = { method: "POST", target, body, attempt: 1 };
  const signed = signer(ctx, lease);
  const verifyInput = {
    secret: SECRET,
    method: "POST",
    target,
    timestamp: signed[protocol.HEADER_TIMESTAMP],
    dispatchId: lease.dispatchId,
    dispatchAttempt: String(lease.attempt),
    body,
    signature: signed[protocol.HEADER_SIGNATURE],
  };
  if (!protocol.verifyRequestSignature(verifyInput)) throw new Error("node:crypto signature did not verify");
  // Plain createHmac over the same message, for reference (what the raw bench clients do).
  const hmacOnly = () => {
    const ts = String(Math.floor(Date.now() / 1000));
    return createHmac("sha256", SECRET)
      .update(`rebuno-request-v1\nPOST\n${target}\n${ts}\n${lease.dispatchId}\n${lease.attempt}\n`)
      .update(body)
      .digest("hex");
  };
  // WebCrypto with the CryptoKey imported once (the edge-runtime fallback's best case). Each
  // operation is awaited, as a request handler would: the threadpool hop is part of the cost.
  const { subtle } = webcrypto;
  const key = await subtle.importKey(
    "raw",
    new TextEncoder().encode(SECRET),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
  const message = () =>
    Buffer.concat([
      Buffer.from(
        `rebuno-request-v1\nPOST\n${target}\n${Math.floor(Date.now() / 1000)}\n${lease.dispatchId}\n${lease.attempt}\n`,
      ),
      body,
    ]);
  const webMessage = message();
  const webMac = await subtle.sign("HMAC", key, webMessage);
  if (!(await subtle.verify("HMAC", key, webMac, webMessage))) throw new Error("WebCrypto did not verify");

  const stats = await compare({
    "raw unsigned round trip": async (n) => {
      for (let i = 0; i < n; i++) await rawUnsigned();
    },
    "sign, transport signer": (n) => {
      for (let i = 0; i < n; i++) sink = signer(ctx, lease);
    },
    "verify, protocol verifier": (n) => {
      for (let i = 0; i < n; i++) sink = protocol.verifyRequestSignature(verifyInput);
    },
    "sign, bare createHmac": (n) => {
      for (let i = 0; i < n; i++) sink = hmacOnly();
    },
    "sign, WebCrypto (cached key)": async (n) => {
      for (let i = 0; i < n; i++) sink = await subtle.sign("HMAC", key, message());
    },
    "verify, WebCrypto (cached key)": async (n) => {
      for (let i = 0; i < n; i++) sink = await subtle.verify("HMAC", key, webMac, webMessage);
    },
  });
  await pool.close();
  child.disconnect();
  print("B9 signing", stats);
  // Ratios use the median batch (a batch the scheduler preempted measures the other tenants):
  // the round trip by wall time, node:crypto by CPU time (synchronous), WebCrypto by wall time
  // (its work runs on the libuv threadpool; the wait is what a request pays).
  const wall = (name) => stats[name].p50Us;
  const cpu = (name) => stats[name].cpu.p50Us;
  const rt = wall("raw unsigned round trip");
  const out = {
    bodyBytes: body.length,
    roundTripUs: rt,
    nodeSignUs: cpu("sign, transport signer"),
    nodeVerifyUs: cpu("verify, protocol verifier"),
    createHmacSignUs: cpu("sign, bare createHmac"),
    webCryptoSignUs: wall("sign, WebCrypto (cached key)"),
    webCryptoVerifyUs: wall("verify, WebCrypto (cached key)"),
    stats,
  };
  out.nodeSignVerifyUs = round(out.nodeSignUs + out.nodeVerifyUs);
  out.webCryptoSignVerifyUs = round(out.webCryptoSignUs + out.webCryptoVerifyUs);
  out.nodeShare = ratio(out.nodeSignVerifyUs, rt);
  out.webCryptoShare = ratio(out.webCryptoSignVerifyUs, rt);
  out.webCryptoVsNode = ratio(out.webCryptoSignVerifyUs, out.nodeSignVerifyUs);
  out.goals = [
    {
      goal: "B9 node:crypto sign+verify ≤ 5% of a round trip",
      value: out.nodeShare,
      pass: out.nodeShare <= 0.05,
    },
  ];
  report("B9", out);
  return out.goals.every((g) => g.pass);
}

// ---------------------------------------------------------------------------------------------

/** Wrap a zod schema as a Standard JSON Schema whose conversion and validation calls are counted. */
function counted(zodSchema, counter) {
  const std = zodSchema["~standard"];
  return {
    "~standard": {
      version: 1,
      vendor: "bench-counted",
      validate: (value) => {
        counter.validate++;
        return std.validate(value);
      },
      jsonSchema: {
        input: (options) => {
          counter.jsonSchema++;
          return std.jsonSchema.input(options);
        },
        output: (options) => std.jsonSchema.output(options),
      },
    },
  };
}

async function b10(protocol, z) {
  const submitText =
    '{"kind":"tool_call","target":"send_email","args":{"to":"ops@example.com","subject":"weekly report",' +
    '"body":"All systems nominal.","cc":["a@b.c"]},"idempotency":"safe_to_retry","resources":[]}';
  const decisionText = JSON.stringify({
    decision: "proceed",
    step_id: "9a3f0c5e2b1d4f6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a",
    resources: [],
  });
  const schema = protocol.SubmitStepRequestSchema;
  const parsedSubmit = JSON.parse(submitText);
  const parsedDecision = JSON.parse(decisionText);
  if (schema.safeParse(parsedSubmit).success !== true) throw new Error("the submit body does not validate");
  const stats = await compare({
    "JSON.parse submit body": (n) => {
      for (let i = 0; i < n; i++) sink = JSON.parse(submitText);
    },
    "zod SubmitStepRequestSchema.parse": (n) => {
      for (let i = 0; i < n; i++) sink = schema.parse(parsedSubmit);
    },
    "JSON.parse decision": (n) => {
      for (let i = 0; i < n; i++) sink = JSON.parse(decisionText);
    },
    "parseStepDecision (parsed)": (n) => {
      for (let i = 0; i < n; i++) sink = protocol.parseStepDecision(parsedDecision);
    },
  });
  print("B10 validation", stats);

  // Guard: JSON Schema generation happens once per tool.
  const { register } = await import("tsx/esm/api");
  register(); // the decorated toolbox is TypeScript (tsx/esbuild lowers the decorators)
  const sdk = await import("@rebuno/sdk");
  const { ToolTestContext } = await import("@rebuno/testing");
  const { makeSchemaToolbox } = await import("./sdk-toolbox.ts");
  const count = { jsonSchema: 0, validate: 0 };
  const Box = makeSchemaToolbox(
    counted(z.object({ sku: z.string() }), count),
    counted(z.object({ sku: z.string(), qty: z.number().int() }), count),
  );
  const fnTool = sdk.defineTool({
    name: "count_fn",
    input: counted(z.object({ q: z.string() }), count),
    execute: (args) => args.q,
  });
  const afterDefinition = count.jsonSchema; // 3 tools
  const box = new Box();
  const first = box.tools;
  const second = box.tools;
  const otherInstance = new Box().tools;
  sdk.toOpenAITools(box);
  sdk.toOpenAITools(box);
  sdk.toAnthropicTools([...box.tools, fnTool]);
  const calls = 500;
  const t = new ToolTestContext();
  await t.run(async () => {
    for (let i = 0; i < calls; i++) {
      await box.tools[0].execute({ sku: `s${i}` });
      await fnTool({ q: `q${i}` });
    }
  });
  const guard = {
    tools: 3,
    jsonSchemaConversionsAtDefinition: afterDefinition,
    jsonSchemaConversionsAfterUse: count.jsonSchema,
    toolsArrayIdentical: first === second,
    sameSchemaObjectAcrossInstances: first[0].inputSchema === otherInstance[0].inputSchema,
    validationsPerCall: round(count.validate / (2 * calls), 3),
  };
  // Ratios use the median batch's CPU time (see compare and b9).
  const p50 = (name) => stats[name].cpu.p50Us;
  const zodVsParse = ratio(p50("zod SubmitStepRequestSchema.parse"), p50("JSON.parse submit body"));
  const decisionVsParse = ratio(p50("parseStepDecision (parsed)"), p50("JSON.parse decision"));
  const out = { bodyBytes: submitText.length, stats, zodVsParse, decisionVsParse, guard };
  out.goals = [
    { goal: "B10 zod request parse ≤ 1 × JSON.parse", value: zodVsParse, pass: zodVsParse <= 1 },
    { goal: "B10 parseStepDecision ≤ 1 × JSON.parse", value: decisionVsParse, pass: decisionVsParse <= 1 },
    {
      goal: "B10 JSON Schema generated once per tool",
      value: `${count.jsonSchema} for 3 tools`,
      pass: afterDefinition === 3 && count.jsonSchema === 3 && guard.toolsArrayIdentical,
    },
  ];
  report("B10", out);
  return out.goals.every((g) => g.pass);
}

// ---------------------------------------------------------------------------------------------

/** A 200-key object, keys in scrambled order (sorting is the canonicalizer's extra work). */
function object200() {
  const o = {};
  for (let i = 0; i < 200; i++) {
    const k = `key_${((i * 7919) % 200).toString(36)}_${i % 3 === 0 ? "é" : "x"}`;
    o[k] = {
      id: i,
      name: `item ${i}`,
      price: i * 1.25,
      active: i % 2 === 0,
      tags: ["a", "b", `t${i}`],
      nested: { z: i, a: `v${i}`, m: null },
    };
  }
  return o;
}

/**
 * Tool arguments as the kernel receives them (the `args` text of a submission, 61–212 B): keys in
 * the caller's order, as JSON.stringify and Python's json.dumps (with its ", " / ": " spacing)
 * write them; a few strings the canonical form re-escapes (newlines stay, `<`, `&` do not).
 */
function toolArgsTexts() {
  const args = [
    { to: "ops@example.com", subject: "weekly report", body: "All systems nominal.", cc: ["a@b.c"], n: 42 },
    { query: "best pizza near me", limit: 10, filters: { open_now: true, price: [1, 2] }, lang: "en-US" },
    {
      path: "/tmp/report.md",
      content: "# Weekly report\n\nAll systems <nominal> & green.\n",
      mode: "overwrite",
    },
    {
      method: "POST",
      url: "https://api.example.com/v1/items?limit=20&offset=40",
      headers: { "Content-Type": "application/json", Authorization: "Bearer abc" },
      body: { name: "Widget", price: 9.99, tags: ["new", "sale"] },
    },
    { text: "Grüße aus München — 東京", target_lang: "ja" },
    { amount: 100.5, currency: "EUR", customer_id: "cus_123", idempotency_key: "k-2024-01-01" },
  ];
  const compact = args.map((a) => JSON.stringify(a));
  const python = args.map((a) =>
    JSON.stringify(a, null, 1)
      .replace(/\n */g, " ")
      .replace(/([[{]) /g, "$1")
      .replace(/ ([\]}])/g, "$1"),
  );
  return [...compact, ...python.slice(0, 2)];
}

async function b11(protocol) {
  const big = object200();
  const bigText = JSON.stringify(big);
  const argsTexts = toolArgsTexts();
  const small = {
    to: "ops@example.com",
    subject: "weekly report",
    body: "All systems nominal.",
    cc: ["a@b.c"],
    n: 42,
  };
  const stats = await compare({
    "JSON.stringify 200-key": (n) => {
      for (let i = 0; i < n; i++) sink = JSON.stringify(big);
    },
    "canonicalJson 200-key": (n) => {
      for (let i = 0; i < n; i++) sink = protocol.canonicalJson(big);
    },
    "toWireJson 200-key": (n) => {
      for (let i = 0; i < n; i++) sink = protocol.toWireJson(big);
    },
    "JSON.stringify small args": (n) => {
      for (let i = 0; i < n; i++) sink = JSON.stringify(small);
    },
    "toWireJson small args": (n) => {
      for (let i = 0; i < n; i++) sink = protocol.toWireJson(small);
    },
    "canonicalJsonText 200-key text": (n) => {
      for (let i = 0; i < n; i++) sink = protocol.canonicalJsonText(bigText);
    },
    [`argsHashFromText tool args ×${argsTexts.length}`]: (n) => {
      for (let i = 0; i < n; i++) for (const t of argsTexts) sink = protocol.argsHashFromText(t);
    },
  });
  print("B11 canonical / strict JSON", stats);
  const s = (n) => stats[n].cpu.p50Us; // median batch's CPU time (see compare and b9)
  const out = {
    bytes200: bigText.length,
    bytesSmall: JSON.stringify(small).length,
    argsTextBytes: argsTexts.map((t) => Buffer.byteLength(t)),
    stats,
    canonicalVsStringify: ratio(s("canonicalJson 200-key"), s("JSON.stringify 200-key")),
    toWireVsStringify200: ratio(s("toWireJson 200-key"), s("JSON.stringify 200-key")),
    toWireVsStringifySmall: ratio(s("toWireJson small args"), s("JSON.stringify small args")),
    canonicalTextUs: s("canonicalJsonText 200-key text"),
    argsHashFromTextUs: round(s(`argsHashFromText tool args ×${argsTexts.length}`) / argsTexts.length, 3),
  };
  out.goals = [
    {
      goal: "B11 canonicalJson ≤ 5 × JSON.stringify (200 keys)",
      value: out.canonicalVsStringify,
      pass: out.canonicalVsStringify <= 5,
    },
  ];
  report("B11", out);
  return out.goals.every((g) => g.pass);
}

async function main() {
  const started = Date.now();
  const protocol = await import("@rebuno/protocol");
  const transport = await import("@rebuno/kernel-transport");
  // zod is the protocol's dependency; load that very copy (bench/ does not depend on zod itself).
  const requireFromProtocol = createRequire(createRequire(import.meta.url).resolve("@rebuno/protocol"));
  const z = (await import(pathToFileURL(requireFromProtocol.resolve("zod")).href)).z;
  console.log(
    `micro bench: ${JSON.stringify(environment())}; ${ROUNDS} interleaved batches of ~${BATCH_MS} ms`,
  );
  const ok = [await b9(protocol, transport), await b10(protocol, z), await b11(protocol)];
  if (sink === undefined) throw new Error("no benchmark ran");
  console.log(`micro bench done in ${round((Date.now() - started) / 1000, 1)} s`);
  if (process.argv.includes("--check") && ok.includes(false)) process.exitCode = 1;
}

// Entry last: the module's top-level bindings above must be initialized before main() runs.
if (process.argv.includes("--serve-bare")) serveBare();
else await main();
