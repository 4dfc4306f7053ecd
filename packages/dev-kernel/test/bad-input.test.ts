// Hostile and malformed input: every case answers a JSON envelope, never
// crashes the kernel, and leaves state untouched.
import { connect } from "node:net";
import { signRequest } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { MAX_BODY_BYTES } from "../src/kernel.js";
import { Harness } from "./harness.js";
import { stores } from "./stores.js";

/** One HTTP/1.1 request written by hand (repeated headers allowed); returns the status code. */
async function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: [string, string][],
): Promise<number> {
  const head = headers.map(([k, v]) => `${k}: ${v}\r\n`).join("");
  const answer = await socketExchange(
    base,
    `${method} ${path} HTTP/1.1\r\nHost: k\r\nConnection: close\r\nContent-Length: 0\r\n${head}\r\n`,
  );
  return Number(answer.slice(9, 12));
}

/** Write raw bytes to the kernel's socket and collect everything until it closes the connection. */
function socketExchange(base: string, bytes: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    let out = "";
    socket.on("data", (d: Buffer) => (out += d.toString()));
    socket.on("error", reject);
    socket.on("close", () => resolve(out));
  });
}

describe.each(stores)("bad input ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("malformed JSON, trailing garbage, empty body, non-object → 400 validation_error", async () => {
    h = await Harness.start(store);
    for (const body of ['{"agent_id":', '{"agent_id":"alpha"} x', "", "[1]", '"str"', "{'a':1}"]) {
      const r = await h.client("POST", "/v0/executions", body);
      expect(r.status, body).toBe(400);
      expect(r.body.code, body).toBe("validation_error");
      expect(r.body.message, body).toMatch(/^validation error: /);
    }
    expect((await h.client("GET", "/v0/executions")).body.executions).toEqual([]);
  });

  test("unknown fields are rejected at every level, naming the field", async () => {
    h = await Harness.start(store);
    const top = await h.client("POST", "/v0/executions", { agent_id: "alpha", colour: "red" });
    expect(top.status).toBe(400);
    expect(top.body.message).toBe('validation error: json: unknown field "colour"');
    const nested = await h.client("POST", "/v0/executions", {
      agent_id: "alpha",
      spawned_by: { execution_id: "01920000-0000-7000-8000-000000000009", step_id: "x", extra: 1 },
    });
    expect(nested.status).toBe(400);
    const proto = await h.client("POST", "/v0/executions", '{"agent_id":"alpha","__proto__":{"x":1}}');
    expect(proto.status).toBe(400);
    const wrongType = await h.client("POST", "/v0/executions", { agent_id: 42 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toMatch(/^validation error: agent_id/);
  });

  test("bad UUIDs in paths and bodies → 400", async () => {
    h = await Harness.start(store);
    for (const path of ["/v0/executions/not-a-uuid", "/v0/executions/123/events", "/v0/approvals/xyz"]) {
      const r = await h.client("GET", path);
      expect(r.status, path).toBe(400);
      expect(r.body.code).toBe("validation_error");
    }
    const body = await h.client("POST", "/v0/executions", { agent_id: "alpha", parent_execution_id: "nope" });
    expect(body.status).toBe(400);
  });

  test("deep nesting is refused with 400, not a crash", async () => {
    h = await Harness.start(store);
    const deep = `{"agent_id":"alpha","input":${"[".repeat(200_000)}${"]".repeat(200_000)}}`;
    const r = await h.client("POST", "/v0/executions", deep);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/nesting/);
    const ok = `{"agent_id":"alpha","input":${"[".repeat(500)}${"]".repeat(500)}}`;
    expect((await h.client("POST", "/v0/executions", ok)).status).toBe(201);
    // Deep args on an agent route too.
    const { id, lease } = await h.started();
    const args = `{"kind":"local","target":"x","args":${'{"a":'.repeat(600)}1${"}".repeat(600)}}`;
    const s = await h.agent("POST", `/v0/executions/${id}/steps`, { raw: args, lease });
    expect(s.status).toBe(400);
  });

  test("unknown routes → 404 envelope; wrong method → 405 envelope with Allow", async () => {
    h = await Harness.start(store);
    const nf = await h.client("GET", "/v0/nothing");
    expect(nf.status).toBe(404);
    expect(nf.body.code).toBe("not_found");
    const nf2 = await h.client("GET", "/v1/executions");
    expect(nf2.status).toBe(404);
    const m = await h.client("PUT", "/v0/executions");
    expect(m.status).toBe(405);
    expect(m.body).toEqual({ code: "method_not_allowed", message: "method not allowed" });
    expect(m.headers.get("allow")).toBe("POST, GET");
    const del = await h.client("DELETE", "/v0/executions/01920000-0000-7000-8000-000000000009");
    expect(del.status).toBe(405);
  });

  test("a body over 10 MiB → 400 validation_error through fetch (docs/protocol.md §2, as the Go kernel)", async () => {
    h = await Harness.start(store);
    const big = `{"agent_id":"alpha","input":"${"x".repeat(MAX_BODY_BYTES)}"}`;
    const r = await h.client("POST", "/v0/executions", big);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: "validation_error",
      message: "validation error: request body over the 10 MiB limit",
    });
    expect((await h.client("GET", "/v0/executions")).body.executions).toEqual([]);
  });

  test("over a socket: 400 once the client stops sending, duplicate signature headers → 401", async () => {
    h = await Harness.start(store);
    const base = await h.kernel.listen();
    // Declare 10 MiB + 1 but send only a few bytes: answered once the body stops arriving.
    const answer = await socketExchange(
      base,
      `POST /v0/executions HTTP/1.1\r\nHost: k\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n{"agent_id":`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain("connection: close");
    expect(answer.slice(answer.indexOf("\r\n\r\n") + 4)).toBe(
      '{"code":"validation_error","message":"validation error: request body over the 10 MiB limit"}\n',
    );
    const { id, lease } = await h.started();
    const path = `/v0/executions/${id}/heartbeat`;
    const ts = String(Math.floor(h.now / 1000));
    const sig = signRequest({
      secret: "alpha-secret",
      method: "POST",
      target: path,
      timestamp: ts,
      dispatchId: lease.dispatchId,
      dispatchAttempt: lease.attempt,
      body: "",
    });
    const headers: [string, string][] = [
      ["rebuno-agent-id", "alpha"],
      ["rebuno-timestamp", ts],
      ["rebuno-dispatch-id", lease.dispatchId],
      ["rebuno-dispatch-attempt", String(lease.attempt)],
      ["rebuno-signature", sig],
    ];
    expect(await rawRequest(base, "POST", path, headers)).toBe(204);
    const dup = await rawRequest(base, "POST", path, [...headers, ["rebuno-signature", sig]]);
    expect(dup).toBe(401);
    const dupTs = await rawRequest(base, "POST", path, [...headers, ["rebuno-timestamp", ts]]);
    expect(dupTs).toBe(401);
    // The kernel still serves after all of that.
    expect(await rawRequest(base, "GET", "/v0/health", [])).toBe(200);
  });

  test("percent-encoded path segments are decoded; the signature uses the target as sent", async () => {
    h = await Harness.start(store, {
      agents: [{ id: "a/b c", webhookUrl: "http://agents.test/x", secret: "s" }],
    });
    const r = await h.client("GET", "/v0/agents/a%2Fb%20c");
    expect(r.status).toBe(200);
    expect(r.body.id).toBe("a/b c");
  });
});
