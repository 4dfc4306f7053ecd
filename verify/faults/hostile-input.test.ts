/**
 * Hostile input against every dev-kernel route, over real sockets: fast-check (seeded; the seed is
 * printed, `FAULT_SEED=<n>` replays it) picks a route of the kernel's own route table (or an unknown
 * path), a method, ids (a real execution's, random UUIDs, junk), a body (random JSON, deep nesting,
 * huge numbers, invalid UTF-8 bytes), random headers and credentials (none, a wrong or right bearer
 * token, a signature by the right or a wrong secret).
 *
 * Promises: no 5xx; every non-2xx answer is the JSON error envelope `{code, message}`; the kernel
 * answers health afterwards. Plus: a policy bundle with a pathological pattern (`^(a+)+$`) and a
 * 100 000-character argument evaluates (RE2: linear time) and gives the expected decisions.
 */
import { request } from "node:http";
import { Client } from "@rebuno/client";
import { type DevKernel, KERNEL_ROUTE_TEMPLATES, startDevKernel } from "@rebuno/dev-kernel";
import { signRequest } from "@rebuno/protocol";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { faultSeed } from "./lib/fault-proxy.js";
import { recordFault } from "./lib/results.js";

const SECRET = "hostile-input-secret-0123456789ab";
const TOKEN = "hostile-input-bearer-token";
const AGENT = "fz";
const POLICY_AGENT = "policy-target";
const RUNS = Number(process.env.FAULT_RUNS ?? 1000);

let kernel: DevKernel;
let base: URL;
let executionId: string;
beforeAll(async () => {
  kernel = await startDevKernel({
    devMode: false,
    bootstrapToken: TOKEN,
    // Nothing listens there: dispatches fail fast and the kernel keeps serving.
    agents: [
      { id: AGENT, webhookUrl: "http://127.0.0.1:9/unused", secret: SECRET },
      // The policy case's own agent: the fuzz may delete or rewrite AGENT.
      { id: POLICY_AGENT, webhookUrl: "http://127.0.0.1:9/unused", secret: SECRET },
    ],
    dispatch: { pollMs: 50, maxAttempts: 1 },
  });
  base = new URL(await kernel.listen({ host: "127.0.0.1", port: 0 }));
  executionId = (await new Client({ baseUrl: base.href, apiKey: TOKEN }).create(AGENT, { seed: 1 })).id;
});
afterAll(async () => {
  await kernel?.close();
});

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/** One request over a fresh socket; an event stream is cut after its headers (bounded). */
function send(
  method: string,
  target: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: base.hostname, port: base.port, method, path: target, headers, agent: false, timeout: 15_000 },
      (res) => {
        const contentType = String(res.headers["content-type"] ?? "");
        if (contentType.startsWith("text/event-stream")) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, contentType, text: "" });
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, contentType, text: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${target}: no answer in 15 s`)));
    req.on("error", reject);
    req.end(method === "GET" || method === "HEAD" ? undefined : body);
  });
}

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"] as const;
const hexUuid = fc.uuid();
const junkSegment = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("..", "%00", "%ff%fe", "a".repeat(5000), "%2F..%2F", "null", "-1", "1e309"),
);
const idArb = fc.oneof(
  fc.constant<"real">("real"),
  hexUuid,
  junkSegment.map((s) => encodeURIComponent(s)),
);
const nested = (depth: number, open: string, close: string) => open.repeat(depth) + close.repeat(depth);
const bodyArb: fc.Arbitrary<Buffer> = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
  fc
    .record({
      agent_id: fc.constantFrom(AGENT, "nobody", ""),
      input: fc.jsonValue({ maxDepth: 4 }),
      idempotency_key: fc.option(fc.string(), { nil: undefined }),
    })
    .map((v) => Buffer.from(JSON.stringify(v))),
  fc.integer({ min: 10, max: 200_000 }).map((d) => Buffer.from(nested(d, "[", "]"))),
  fc.integer({ min: 10, max: 50_000 }).map((d) => Buffer.from(`${'{"a":'.repeat(d)}1${"}".repeat(d)}`)),
  fc
    .constantFrom(
      "1e400",
      "-1e400",
      "123456789012345678901234567890123456789",
      '{"n":1e999999}',
      '{"n":-0.0000000000000000000000000000001e-400}',
      '{"input":{"big":18446744073709551616}}',
      "",
      "{",
      '{"a":"\\ud800"}',
    )
    .map((s) => Buffer.from(s)),
  fc
    .uint8Array({ maxLength: 300 })
    .map((b) => Buffer.concat([Buffer.from('{"x":"'), Buffer.from(b), Buffer.from('"}')])),
  fc.constant(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d])),
);
const headerName = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,20}$/)
  .filter((n) => !["host", "content-length", "transfer-encoding", "connection"].includes(n));
const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/);
const authArb = fc.constantFrom(
  "none",
  "bearer-ok",
  "bearer-wrong",
  "signed-ok",
  "signed-wrong",
  "signed-stale",
);

const caseArb = fc.record({
  route: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...KERNEL_ROUTE_TEMPLATES) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  ),
  method: fc.option(fc.constantFrom(...METHODS), { nil: undefined, freq: 4 }),
  ids: fc.array(idArb, { minLength: 2, maxLength: 2 }),
  unknownPath: fc.array(
    junkSegment.map((s) => encodeURIComponent(s)),
    { minLength: 1, maxLength: 4 },
  ),
  query: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }), {
    nil: undefined,
  }),
  body: bodyArb,
  contentType: fc.constantFrom("application/json", "text/plain", "application/json; charset=latin1", ""),
  auth: authArb,
  headers: fc.dictionary(headerName, headerValue, { maxKeys: 4 }),
  lease: fc.option(fc.tuple(fc.string({ maxLength: 30 }), fc.oneof(fc.integer(), fc.constant(2 ** 60))), {
    nil: undefined,
  }),
});

const stats = { requests: 0, status2xx: 0, status4xx: 0, other: 0, fivexx: 0, notEnvelope: 0 };
const byStatus = new Map<number, number>();

describe("hostile input to every dev-kernel route", () => {
  it("no 5xx, every refusal is the JSON error envelope, the kernel stays healthy", async () => {
    const seed = faultSeed();
    console.log(`hostile input: FAULT_SEED=${seed} (${RUNS} runs, ${KERNEL_ROUTE_TEMPLATES.length} routes)`);
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        let i = 0;
        const fill = (seg: string) => {
          const id = c.ids[i++ % c.ids.length]!;
          return id === "real" ? (seg === ":uuid" ? executionId : AGENT) : id;
        };
        const path =
          c.route === undefined
            ? `/v0/${c.unknownPath.join("/")}`
            : c.route.path
                .split("/")
                .map((s) => (s.startsWith(":") ? fill(s) : s))
                .join("/");
        const method = c.method ?? c.route?.method ?? "GET";
        const query = c.query === undefined ? "" : `?${new URLSearchParams(c.query).toString()}`;
        const target = path + query;
        const headers: Record<string, string> = { ...c.headers };
        // Framed explicitly: node:http sends a DELETE/OPTIONS body unframed (neither length nor
        // chunked), which is a different request stream than the one this case means to send.
        const hasBody = method !== "GET" && method !== "HEAD";
        if (hasBody) headers["content-length"] = String(c.body.length);
        if (c.contentType !== "") headers["content-type"] = c.contentType;
        if (c.auth === "bearer-ok") headers.authorization = `Bearer ${TOKEN}`;
        if (c.auth === "bearer-wrong") headers.authorization = "Bearer nope";
        if (c.auth.startsWith("signed")) {
          const now = Math.floor(Date.now() / 1000);
          const timestamp = c.auth === "signed-stale" ? now - 10_000 : now;
          const sentBody = hasBody ? c.body : "";
          headers["rebuno-agent-id"] = AGENT;
          headers["rebuno-timestamp"] = String(timestamp);
          if (c.lease !== undefined) {
            headers["rebuno-dispatch-id"] = c.lease[0];
            headers["rebuno-dispatch-attempt"] = String(c.lease[1]);
          }
          headers["rebuno-signature"] = signRequest({
            secret: c.auth === "signed-wrong" ? "another-secret-0123456789abcdef" : SECRET,
            method,
            target,
            timestamp,
            dispatchId: c.lease?.[0],
            dispatchAttempt: c.lease?.[1],
            body: sentBody,
          });
        }
        const answer = await send(method, target, headers, c.body);
        stats.requests++;
        byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
        const where = `${method} ${target.slice(0, 120)} → ${answer.status} ${answer.text.slice(0, 200)}`;
        if (answer.status >= 500) stats.fivexx++;
        expect(answer.status, where).toBeLessThan(500);
        if (answer.status >= 200 && answer.status < 300) {
          stats.status2xx++;
          return;
        }
        if (answer.status >= 400) stats.status4xx++;
        else stats.other++;
        if (method === "HEAD") return; // no body by definition
        let envelope: { code?: unknown; message?: unknown } | undefined;
        try {
          envelope = JSON.parse(answer.text);
        } catch {
          envelope = undefined;
        }
        const ok =
          answer.contentType.startsWith("application/json") &&
          typeof envelope?.code === "string" &&
          typeof envelope?.message === "string";
        if (!ok) stats.notEnvelope++;
        expect(ok, where).toBe(true);
      }),
      { seed, numRuns: RUNS, endOnFailure: true },
    );
    const health = await send("GET", "/v0/health", {}, Buffer.alloc(0));
    expect(health.status).toBe(200);
    recordFault({
      id: "hostile-input-routes",
      group: "Hostile input",
      fault: `fast-check fuzz of all ${KERNEL_ROUTE_TEMPLATES.length} dev-kernel routes and unknown paths over sockets: methods, ids, random/deep/huge/invalid-UTF-8 bodies, headers, bearer and signed credentials`,
      promise: "no 5xx; every non-2xx is the JSON error envelope {code, message}; health answers afterwards",
      test: "verify/faults/hostile-input.test.ts",
      seed,
      counts: {
        ...stats,
        statuses: [...byStatus.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([s, n]) => `${s}×${n}`)
          .join(" "),
      },
    });
  });

  it("a pathological policy pattern with a 100 000-character argument evaluates, with the right decision", async () => {
    const bundle = `default_action: allow
rules:
  - id: nested-plus
    when: { target: write, arguments: { text: { regex: "^(a+)+$" } } }
    then: { decision: deny, reason: nested }
`;
    const cases = [
      { name: "near-miss", target: "write", args: { text: `${"a".repeat(100_000)}!` } },
      { name: "match", target: "write", args: { text: "a".repeat(100_000) } },
    ];
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const set = await send(
      "POST",
      `/v0/policies/${POLICY_AGENT}`,
      auth,
      Buffer.from(JSON.stringify({ bundle })),
    );
    expect(set.status, set.text).toBe(204);
    const tested = await send(
      "POST",
      `/v0/policies/${POLICY_AGENT}/test`,
      auth,
      Buffer.from(JSON.stringify({ cases })),
    );
    expect(tested.status, tested.text.slice(0, 300)).toBe(200);
    const results = (
      JSON.parse(tested.text) as { results: { name: string; decision: string; rule_id: string }[] }
    ).results;
    const decisions = results.map((r) => `${r.name}:${r.decision}:${r.rule_id}`);
    expect(decisions).toEqual(["near-miss:allow:default", "match:deny:nested-plus"]);
    const health = await send("GET", "/v0/health", {}, Buffer.alloc(0));
    expect(health.status).toBe(200);
    recordFault({
      id: "hostile-input-policy-regex",
      group: "Hostile input",
      fault: "policy bundle with `^(a+)+$` evaluated over HTTP against 100 000-character arguments",
      promise:
        "evaluation completes (RE2, linear time) with the expected decisions; the kernel keeps serving",
      test: "verify/faults/hostile-input.test.ts",
      counts: { cases: results.length, decisions: decisions.join(" ") },
    });
  });
});
