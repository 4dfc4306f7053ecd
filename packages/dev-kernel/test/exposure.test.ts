// Anonymous access beyond loopback (src/exposure.ts): listen() decides from the address it bound,
// refuses anything but loopback in dev mode, binds anyway when told the network is trusted, and a
// kernel that requires a token serves any address but answers anonymous requests 401.
import dns from "node:dns";
import { createConnection } from "node:net";
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, test } from "vitest";
import {
  AnonymousNetworkAccessError,
  type DevKernel,
  isLoopbackAddress,
  startDevKernel,
} from "../src/index.js";
import { DEFAULT_AGENTS, Harness, leaseOf } from "./harness.js";
import { stores } from "./stores.js";

const kernels: DevKernel[] = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
});

async function devKernel(options: Parameters<typeof startDevKernel>[0] = {}): Promise<DevKernel> {
  const k = await startDevKernel({ onError: () => {}, ...options });
  kernels.push(k);
  return k;
}

/** The listen() refusal, asserted to be the typed error. */
async function refusal(listening: Promise<string>): Promise<AnonymousNetworkAccessError> {
  const err = await listening.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(AnonymousNetworkAccessError.isInstance(err), String(err)).toBe(true);
  return err as AnonymousNetworkAccessError;
}

/** True when nothing accepts TCP connections on 127.0.0.1:`port` (the refused socket was closed). */
function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

const nonLoopbackInterface = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && !i.internal && i.family === "IPv4")?.address;

describe("what counts as loopback", () => {
  test.each([
    ["127.0.0.1", true],
    ["127.255.255.254", true],
    ["::1", true],
    ["0:0:0:0:0:0:0:1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["::ffff:0.0.0.0", false],
    ["128.0.0.1", false],
    ["10.0.0.1", false],
    ["::ffff:10.0.0.1", false],
    ["::2", false],
    ["fe80::1%lo", false],
    ["localhost", false], // a name, not an address: listen() judges what it resolved to
    ["127.0.0.1.example.com", false],
    ["", false],
  ])("%j → %s", (address, loopback) => {
    expect(isLoopbackAddress(address)).toBe(loopback);
  });
});

describe("listen() in dev mode (anonymous requests have full access)", () => {
  test("0.0.0.0 is refused with a typed error naming the address, and the socket is closed again", async () => {
    const k = await devKernel();
    const err = await refusal(k.listen({ host: "0.0.0.0", port: 0 }));
    expect(err).toMatchObject({ code: "anonymous_network_access", address: "0.0.0.0", host: "0.0.0.0" });
    expect(err.message).toContain("not a loopback address");
    expect(err.message).toContain("allowAnonymous");
    expect(err.message).toContain("devMode: false");
    expect(await portClosed(err.port)).toBe(true);
    expect(k.url).toBeUndefined();
    // Nothing was lost: the same kernel then listens on loopback and serves.
    const url = await k.listen({ host: "127.0.0.1", port: 0 });
    expect((await fetch(`${url}/v0/executions`)).status).toBe(200);
  });

  test('"" and "::" (every interface) are refused', async () => {
    const k = await devKernel();
    const empty = await refusal(k.listen({ host: "", port: 0 }));
    expect(["::", "0.0.0.0"]).toContain(empty.address);
    expect(empty.host).toBe("");
    const any6 = await refusal(k.listen({ host: "::", port: 0 }));
    expect(any6.address).toBe("::");
  });

  test("a host name is judged by the address it resolved to, not by its text", async () => {
    const k = await devKernel();
    // Node's listen() resolves names through dns.lookup: answer for two made-up names.
    const original = dns.lookup;
    const fake = ((hostname: string, options: unknown, callback: unknown) => {
      const answer: Record<string, string> = { "loopback.test": "127.0.0.1", "everywhere.test": "0.0.0.0" };
      const address = answer[hostname];
      if (address === undefined) return (original as (...a: unknown[]) => void)(hostname, options, callback);
      const done = (typeof options === "function" ? options : callback) as (
        e: null,
        a: string | { address: string; family: number }[],
        f?: number,
      ) => void;
      // Node 24's listen() asks for every address (`all: true`), Node 20's for one.
      const all =
        typeof options === "object" && options !== null && (options as { all?: boolean }).all === true;
      process.nextTick(() => (all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
    }) as typeof dns.lookup;
    dns.lookup = fake;
    try {
      const err = await refusal(k.listen({ host: "everywhere.test", port: 0 }));
      expect(err).toMatchObject({ address: "0.0.0.0", host: "everywhere.test" });
      expect(err.message).toContain('asked for "everywhere.test"');
      expect(await k.listen({ host: "loopback.test", port: 0 })).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      dns.lookup = original;
    }
  });

  test("loopback in any spelling binds: localhost, 127.0.0.2, ::1, 127.1", async () => {
    for (const host of ["localhost", "127.0.0.2", "::1", "127.1"]) {
      const k = await devKernel();
      const url = await k.listen({ host, port: 0 });
      expect((await fetch(`${url}/v0/health`)).status, host).toBe(200);
    }
  });

  test.skipIf(nonLoopbackInterface === undefined)(
    "this machine's own network address is refused",
    async () => {
      const k = await devKernel();
      const err = await refusal(k.listen({ host: nonLoopbackInterface!, port: 0 }));
      expect(err.address).toBe(nonLoopbackInterface);
    },
  );

  test("a port in use rejects with the socket error, and the kernel may listen again", async () => {
    const first = await devKernel();
    const taken = Number(new URL(await first.listen({ port: 0 })).port);
    const k = await devKernel();
    await expect(k.listen({ port: taken })).rejects.toMatchObject({ code: "EADDRINUSE" });
    expect((await fetch(`${await k.listen({ port: 0 })}/v0/health`)).status).toBe(200);
  });

  test("allowAnonymous: the network is trusted, so it binds every interface and serves anonymously", async () => {
    const k = await devKernel();
    const url = await k.listen({ host: "0.0.0.0", port: 0, allowAnonymous: true });
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    const port = new URL(url).port;
    expect((await fetch(`http://127.0.0.1:${port}/v0/executions`)).status).toBe(200);
  });
});

describe("startDevKernel({ devMode: false }) needs something to authorize with", () => {
  test("neither a bootstrap token nor API keys: a ConfigurationError", async () => {
    await expect(startDevKernel({ devMode: false })).rejects.toMatchObject({
      name: "ConfigurationError",
      message: expect.stringContaining("bootstrapToken or at least one of apiKeys"),
    });
    await expect(startDevKernel({ devMode: false, bootstrapToken: "" })).rejects.toMatchObject({
      name: "ConfigurationError",
    });
  });

  test("API keys alone are enough; the key's token works and anonymous requests get 401", async () => {
    const k = await devKernel({
      devMode: false,
      apiKeys: [{ name: "reader", token: "reader-token", scopes: ["executions:read"] }],
    });
    const url = await k.listen({ host: "0.0.0.0", port: 0 });
    const base = `http://127.0.0.1:${new URL(url).port}`;
    expect((await fetch(`${base}/v0/executions`)).status).toBe(401);
    const read = await fetch(`${base}/v0/executions`, { headers: { authorization: "Bearer reader-token" } });
    expect(read.status).toBe(200);
  });
});

const ROOT = "root-token-7f3a";
const BUNDLE = `default_action: allow
rules:
  - id: refunds
    when: { target: refund }
    then: { decision: require_approval }
`;

describe.each(stores)("a kernel that requires a token, on every interface ($name store)", (store) => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("anonymous reads, writes and approval grants get 401; the token is accepted", async () => {
    h = await Harness.start(store, {
      devMode: false,
      bootstrapToken: ROOT,
      agents: [{ ...DEFAULT_AGENTS[0]!, policy: BUNDLE }],
      apiKeys: [{ name: "approvals-reader", token: "approvals-reader-token", scopes: ["approvals:read"] }],
    });
    const url = await h.kernel.listen({ host: "0.0.0.0", port: 0 });
    const base = `http://127.0.0.1:${new URL(url).port}`;
    // A real pending approval: the agent's step is held by the policy.
    const created = await h.client("POST", "/v0/executions", { agent_id: "alpha", input: { q: 1 } }, ROOT);
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const lease = leaseOf(await h.webhook(id));
    const held = await h.submit(id, lease, { kind: "tool_call", target: "refund", args: { cents: 10 } });
    const approvalId = held.body.approval_id as string;
    expect(approvalId).toEqual(expect.any(String));

    const call = (method: string, path: string, token?: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const grant = { decided_by: "ops", rationale: "checked" };
    const anonymous: [string, string, unknown?][] = [
      ["GET", "/v0/executions"],
      ["GET", `/v0/executions/${id}`],
      ["GET", `/v0/executions/${id}/events`],
      ["POST", "/v0/executions", { agent_id: "alpha" }],
      ["POST", `/v0/executions/${id}/cancel`],
      ["GET", "/v0/approvals"],
      ["POST", `/v0/approvals/${approvalId}/grant`, grant],
      ["POST", "/v0/policies/alpha", { bundle: "default_action: allow\n" }],
      ["DELETE", "/v0/agents/alpha"],
      ["GET", "/v0/api-keys"],
    ];
    for (const [method, path, body] of anonymous) {
      const r = await call(method, path, undefined, body);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(((await r.json()) as { code: string }).code).toBe("unauthorized");
      expect((await call(method, path, "not-the-token", body)).status, `${method} ${path} wrong token`).toBe(
        401,
      );
    }
    // A genuine key without the scope: 403, and the approval is still pending.
    const scoped = await call("POST", `/v0/approvals/${approvalId}/grant`, "approvals-reader-token", grant);
    expect(scoped.status).toBe(403);
    expect(((await scoped.json()) as { message: string }).message).toContain("approvals:write");
    expect(
      ((await (await call("GET", `/v0/executions/${id}`, ROOT)).json()) as { status: string }).status,
    ).toBe("blocked");

    expect((await call("GET", "/v0/executions", ROOT)).status).toBe(200);
    expect((await call("POST", `/v0/approvals/${approvalId}/grant`, ROOT, grant)).status).toBe(204);
    const approval = await call("GET", `/v0/approvals/${approvalId}`, ROOT);
    expect(await approval.json()).toMatchObject({ status: "granted", decided_by: "ops" });
  });
});
