/**
 * Raw-socket fuzz of `agent.serve()`: the agent runs in a child process (so a crash is observable)
 * and receives what an attacker or a broken client can send before any signature check: absolute
 * and invalid targets, invalid header bytes, oversized headers and bodies, slow and truncated
 * requests, wrong methods and content types. Every request gets a JSON error answer (or, when the
 * client is gone, nothing), each refusal is logged and counted, and the process keeps serving.
 *
 * The fast-check part is seeded: set FUZZ_SEED to replay a run (the seed is printed), FUZZ_RUNS
 * for more cases (default 300).
 */
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { webhookSignature } from "@rebuno/protocol";
import { type AgentProcess, startAgentProcess } from "@rebuno/test-kit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/webhook-agent.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("./fixtures/tsconfig.json", import.meta.url));
const SECRET = "fuzz-secret-0123456789abcdef";

let agent: AgentProcess;
let port = 0;
/** The agent's stdout lines (the kit's live array). */
let lines: string[] = [];

beforeAll(async () => {
  agent = await startAgentProcess({ fixture, tsconfig, env: { REBUNO_AGENT_SECRET: SECRET } });
  lines = agent.process.lines;
  const url = agent.url;
  // Served on loopback by default.
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhook$/);
  port = Number(new URL(url).port);
}, 40_000);

afterAll(async () => {
  await agent?.process.kill();
});

interface RawAnswer {
  readonly status: number | undefined;
  readonly body: string;
  readonly raw: string;
}

/**
 * Sends raw bytes on a fresh connection and reads until the server closes it (or `waitMs`).
 * `finish: false` keeps the write side open (a slow client); `resetOnAnswer` resets the connection
 * once the status line of the server's first answer arrived (an interim `100 Continue` counts),
 * right after writing `beforeReset`: a condition, not a delay, so it holds on a loaded machine.
 */
function rawRequest(
  bytes: string | Buffer,
  options: { finish?: boolean; waitMs?: number; resetOnAnswer?: boolean; beforeReset?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString("latin1");
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(raw);
      const split = raw.indexOf("\r\n\r\n");
      resolve({
        status: match ? Number(match[1]) : undefined,
        body: split === -1 ? "" : raw.slice(split + 4),
        raw,
      });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, options.waitMs ?? 5_000);
    let reset = false;
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      if (!options.resetOnAnswer || reset || !Buffer.concat(chunks).includes("\r\n")) return;
      reset = true;
      if (options.beforeReset !== undefined) socket.write(options.beforeReset);
      socket.resetAndDestroy();
    });
    socket.on("close", done);
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNREFUSED") reject(err);
    });
    socket.on("connect", () => {
      if (options.finish === false) socket.write(bytes);
      else socket.end(bytes);
    });
  });
}

function expectJsonError(answer: RawAnswer, status: number, what: string): void {
  expect(answer.status, `${what}: ${answer.raw.slice(0, 200)}`).toBe(status);
  expect(answer.raw.toLowerCase(), what).toContain("content-type: application/json");
  const body = JSON.parse(answer.body) as { code?: unknown; message?: unknown };
  expect(typeof body.code, what).toBe("string");
  expect(typeof body.message, what).toBe("string");
}

async function expectAlive(): Promise<void> {
  expect(agent.process.child.exitCode, agent.process.stderr()).toBeNull();
  const health = await rawRequest("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
  expect(health.status, agent.process.stderr()).toBe(200);
  expect(JSON.parse(health.body)).toEqual({ status: "ok" });
  // And it still verifies signatures (a signed but invalid payload is a 400, not a crash).
  const body = '{"execution_id":"e"}';
  const signed = await rawRequest(
    `POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n` +
      `Rebuno-Signature: ${webhookSignature(SECRET, body)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  expectJsonError(signed, 400, "signed invalid payload");
}

const rejectedSince = (from: number) => lines.slice(from).filter((l) => l.startsWith("REJECTED "));

async function waitForLine(from: number, prefix: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = lines.slice(from).find((l) => l.startsWith(prefix));
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no '${prefix}' line; got ${lines.slice(from).join(" | ")}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const CASES: readonly { name: string; bytes: string | Buffer; status: number; cause: string }[] = [
  {
    name: "absolute-form target with a malformed URL (crashed the process before)",
    bytes: "GET http://[::1 HTTP/1.1\r\nHost: a\r\n\r\n",
    status: 400,
    cause: "malformed_target",
  },
  {
    name: "absolute-form POST with a malformed authority",
    bytes: "POST http://[::1/webhook HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
    status: 400,
    cause: "malformed_target",
  },
  {
    name: "absolute-form target with a bad port",
    bytes: "POST http://a:99999999/webhook HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
    status: 400,
    cause: "malformed_target",
  },
  {
    name: "asterisk-form target",
    bytes: "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
    status: 400,
    cause: "malformed_target",
  },
  {
    name: "relative target",
    bytes: "GET webhook HTTP/1.1\r\nHost: a\r\n\r\n",
    status: 400,
    cause: "malformed_request",
  },
  {
    name: "valid absolute-form target to another path",
    bytes: "GET http://a/elsewhere HTTP/1.1\r\nHost: a\r\n\r\n",
    status: 404,
    cause: "not_found",
  },
  {
    name: "GET on the webhook path",
    bytes: "GET /webhook HTTP/1.1\r\nHost: a\r\n\r\n",
    status: 405,
    cause: "method_not_allowed",
  },
  {
    name: "PUT on the webhook path",
    bytes: "PUT /webhook HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}",
    status: 405,
    cause: "method_not_allowed",
  },
  {
    name: "invalid header name byte",
    bytes: "POST /webhook HTTP/1.1\r\nHost: a\r\nX-B\x01d: v\r\n\r\n",
    status: 400,
    cause: "malformed_request",
  },
  {
    name: "NUL in a header value",
    bytes: "POST /webhook HTTP/1.1\r\nHost: a\r\nX-Bad: a\x00b\r\n\r\n",
    status: 400,
    cause: "malformed_request",
  },
  {
    name: "invalid Content-Length",
    bytes: "POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n",
    status: 400,
    cause: "malformed_request",
  },
  {
    name: "Content-Length with Transfer-Encoding",
    bytes:
      "POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    status: 400,
    cause: "malformed_request",
  },
  {
    name: "TLS handshake bytes",
    bytes: Buffer.from([
      0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a,
    ]),
    status: 400,
    cause: "malformed_request",
  },
  {
    name: "oversized headers",
    bytes: `GET /webhook HTTP/1.1\r\nHost: a\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    status: 431,
    cause: "headers_too_large",
  },
  {
    name: "declared body over 1 MiB",
    bytes:
      "POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{",
    status: 413,
    cause: "payload_too_large",
  },
  {
    name: "chunked body over 1 MiB",
    bytes: `POST /webhook HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n${`100000\r\n${"x".repeat(0x100000)}\r\n`.repeat(2)}0\r\n\r\n`,
    status: 413,
    cause: "payload_too_large",
  },
  {
    name: "wrong content type",
    bytes: "POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
    status: 415,
    cause: "unsupported_media_type",
  },
  {
    name: "missing signature",
    bytes:
      "POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    status: 401,
    cause: "missing_signature",
  },
  {
    name: "wrong signature",
    bytes: `POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nRebuno-Signature: sha256=${"0".repeat(64)}\r\nContent-Length: 2\r\n\r\n{}`,
    status: 401,
    cause: "bad_signature",
  },
];

describe("agent.serve() under hostile input (child process)", () => {
  for (const c of CASES) {
    it(`answers a JSON error, logs and counts: ${c.name}`, async () => {
      const from = lines.length;
      const answer = await rawRequest(c.bytes);
      expectJsonError(answer, c.status, c.name);
      expect(await waitForLine(from, `REJECTED ${c.cause} `)).toBe(`REJECTED ${c.cause} ${c.status}`);
      await expectAlive();
    });
  }

  it("answers 408 to a client that never finishes its headers (headersTimeout)", async () => {
    const from = lines.length;
    const answer = await rawRequest("POST /webhook HTTP/1.1\r\nHost: a\r\n", {
      finish: false,
      waitMs: 15_000,
    });
    expectJsonError(answer, 408, "slow headers");
    await waitForLine(from, "REJECTED request_timeout 408");
    await expectAlive();
  }, 20_000);

  it("answers 408 to a client that trickles its body (requestTimeout)", async () => {
    const from = lines.length;
    const answer = await rawRequest(
      "POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      { finish: false, waitMs: 15_000 },
    );
    expectJsonError(answer, 408, "slow body");
    await waitForLine(from, "REJECTED request_timeout 408");
    await expectAlive();
  }, 20_000);

  it("counts a body cut off by the client (nothing left to answer)", async () => {
    const from = lines.length;
    // The server's `100 Continue` says it has parsed the headers and is reading the body: the
    // client then sends part of it and resets (a reset before that point would be no request).
    await rawRequest(
      "POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n",
      { finish: false, resetOnAnswer: true, beforeReset: '{"exec', waitMs: 3_000 },
    );
    await waitForLine(from, "REJECTED truncated_body 0");
    await expectAlive();
  });

  it("survives a client that resets while its oversized body is being drained", async () => {
    const from = lines.length;
    const answer = await rawRequest(
      `POST /webhook HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n${"x".repeat(100_000)}`,
      { finish: false, resetOnAnswer: true, waitMs: 3_000 },
    );
    expect(answer.status).toBe(413);
    await waitForLine(from, "REJECTED payload_too_large 413");
    await expectAlive();
  });

  it("survives seeded random request lines, headers and bodies, and keeps answering", async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    console.log(`webhook fuzz seed: ${seed} (replay with FUZZ_SEED=${seed})`);
    const byteString = (max: number) =>
      fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a).toString("latin1"));
    const target = fc.oneof(
      fc.constantFrom(
        "/webhook",
        "/healthz",
        "*",
        "",
        "/",
        "//",
        "/webhook?x=%zz",
        "http://",
        "https://[",
        "http://[::1",
      ),
      fc
        .tuple(fc.constantFrom("http://", "https://", "HTTP://", "ftp://", "/"), byteString(40))
        .map(([a, b]) => a + b.replace(/[\r\n ]/g, "")),
      byteString(60).map((s) => s.replace(/[\r\n ]/g, "")),
    );
    const method = fc.oneof(
      fc.constantFrom("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"),
      byteString(8),
    );
    const headerLine = fc.oneof(
      fc.constantFrom(
        "Content-Type: application/json",
        "Content-Type: text/plain",
        "Content-Length: 5",
        "Content-Length: -1",
        "Content-Length: 99999999999",
        "Transfer-Encoding: chunked",
        "Rebuno-Signature: sha256=00",
        "Rebuno-Signature: v1=abc",
        "Expect: 100-continue",
        "Connection: close",
      ),
      fc.tuple(byteString(12), byteString(40)).map(([n, v]) => `${n}: ${v}`),
    );
    const request = fc.record({
      method,
      target,
      version: fc.constantFrom("HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1 extra", ""),
      headers: fc.array(headerLine, { maxLength: 6 }),
      body: byteString(200),
    });
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const bytes = Buffer.from(
          `${r.method} ${r.target} ${r.version}\r\nHost: a\r\n${r.headers.map((h) => `${h}\r\n`).join("")}\r\n${r.body}`,
          "latin1",
        );
        const answer = await rawRequest(bytes, { waitMs: 4_000 });
        if (answer.status !== undefined) {
          answered++;
          // Whatever was answered is the JSON envelope (or an empty 1xx/HEAD answer).
          const split = answer.raw.indexOf("\r\n\r\n");
          const head = answer.raw.slice(0, split).toLowerCase();
          if (answer.status >= 200 && r.method !== "HEAD")
            expect(head).toContain("content-type: application/json");
        }
        expect(agent.process.child.exitCode, agent.process.stderr()).toBeNull();
      }),
      { seed, numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
    expect(answered).toBeGreaterThan(0);
    await expectAlive();
    expect(rejectedSince(0).length).toBeGreaterThan(CASES.length);
  }, 240_000);

  it("never logs the secret, a signature or a body", () => {
    const logged = lines.filter((l) => l.startsWith("LOG ")).join("\n");
    expect(logged).toContain("refused a webhook request");
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain("sha256=0000");
    expect(logged).not.toContain('"exec');
  });
});
