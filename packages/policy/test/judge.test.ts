import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateJudge } from "../src/index.js";

type Handler = (body: unknown, res: ServerResponse) => void;

let server: Server;
let base = "";
let handler: Handler = (_b, res) => res.end();
const received: unknown[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      received.push({ method: req.method, contentType: req.headers["content-type"], body });
      handler(body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const answer =
  (status: number, body: string): Handler =>
  (_b, res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
  };

const request = { agentId: "a1", target: "refund_issue", args: { amount: 5 }, instructions: "be strict" };

describe("evaluateJudge against a loopback HTTP judge", () => {
  it("uses the judge's decision when the score reaches the threshold, and posts the documented body", async () => {
    received.length = 0;
    handler = answer(200, JSON.stringify({ decision: "allow", score: 0.9 }));
    await expect(evaluateJudge(`${base}/judge`, request, 0.6, "deny")).resolves.toBe("allow");
    expect(received).toEqual([
      {
        method: "POST",
        contentType: "application/json",
        body: { agent_id: "a1", tool: "refund_issue", arguments: { amount: 5 }, instructions: "be strict" },
      },
    ]);
  });

  it("score exactly at the threshold counts", async () => {
    handler = answer(200, JSON.stringify({ decision: "deny", score: 0.6 }));
    await expect(evaluateJudge(base, request, 0.6, "allow")).resolves.toBe("deny");
  });

  it("omits instructions when unset", async () => {
    received.length = 0;
    handler = answer(200, JSON.stringify({ decision: "allow", score: 1 }));
    await evaluateJudge(base, { agentId: "a", target: "t", args: [] }, 0.5, "deny");
    expect((received[0] as { body: unknown }).body).toEqual({ agent_id: "a", tool: "t", arguments: [] });
  });

  it("low score → fallback", async () => {
    handler = answer(200, JSON.stringify({ decision: "allow", score: 0.2 }));
    await expect(evaluateJudge(base, request, 0.6, "require_approval")).resolves.toBe("require_approval");
  });

  it.each([
    ["non-2xx", 500, JSON.stringify({ decision: "allow", score: 1 })],
    ["not JSON", 200, "yes"],
    ["unknown decision", 200, JSON.stringify({ decision: "maybe", score: 1 })],
    ["missing score", 200, JSON.stringify({ decision: "allow" })],
  ])("%s → fallback", async (_name, status, body) => {
    handler = answer(status, body);
    await expect(evaluateJudge(base, request, 0.6, "deny")).resolves.toBe("deny");
  });

  it("unreachable endpoint → fallback", async () => {
    // Bind and close a port so nothing is listening on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await expect(evaluateJudge(`http://127.0.0.1:${port}/judge`, request, 0.6, "deny")).resolves.toBe("deny");
  });

  it("a judge slower than the timeout → fallback", async () => {
    handler = (_b, res) => {
      setTimeout(() => answer(200, JSON.stringify({ decision: "allow", score: 1 }))(undefined, res), 500);
    };
    await expect(evaluateJudge(base, request, 0.6, "deny", fetch, 50)).resolves.toBe("deny");
  });

  it("accepts an injected fetch", async () => {
    const fake = async () => ({ ok: true, json: async () => ({ decision: "require_approval", score: 0.7 }) });
    await expect(evaluateJudge("http://judge.invalid", request, 0.7, "deny", fake)).resolves.toBe(
      "require_approval",
    );
  });
});
