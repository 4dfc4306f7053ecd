/**
 * `rebuno-dev --otlp-endpoint` / OTEL_EXPORTER_OTLP_ENDPOINT (docs/observability.md §1.2): the flag
 * is parsed and checked, and the process really exports its spans over OTLP/HTTP: a local receiver
 * (the collector stand-in) gets the failed webhook delivery span, with its cause, when the process
 * flushes on SIGTERM.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigurationError } from "@rebuno/protocol";
import { spawnRebunoDev } from "@rebuno/test-kit";
import { describe, expect, test } from "vitest";
import { parseCliArgs } from "../src/cli-options.js";

describe("rebuno-dev OTLP export", () => {
  test("the flag, then the standard variable, name the endpoint; nothing set exports nothing", () => {
    expect(parseCliArgs([], {}).otlpEndpoint).toBeUndefined();
    expect(parseCliArgs([], { OTEL_EXPORTER_OTLP_ENDPOINT: "" }).otlpEndpoint).toBeUndefined();
    expect(parseCliArgs([], { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).otlpEndpoint).toBe(
      "http://127.0.0.1:4318",
    );
    expect(
      parseCliArgs(["--otlp-endpoint=http://127.0.0.1:9"], { OTEL_EXPORTER_OTLP_ENDPOINT: "http://x:1" })
        .otlpEndpoint,
    ).toBe("http://127.0.0.1:9");
  });

  test("an endpoint that is not an http(s) URL is a ConfigurationError naming the flag", () => {
    for (const bad of ["127.0.0.1:4318", "grpc://127.0.0.1:4317", "http://"]) {
      let error: unknown;
      try {
        parseCliArgs(["--otlp-endpoint", bad], {});
      } catch (e) {
        error = e;
      }
      expect(ConfigurationError.isInstance(error), bad).toBe(true);
      expect((error as Error).message).toMatch(/--otlp-endpoint must be an http\(s\) URL/);
    }
    expect(() => parseCliArgs(["--otlp-endpoint"], {})).toThrow(/--otlp-endpoint needs a value/);
  });

  test("the process exports the kernel's spans to the endpoint and flushes them on SIGTERM", async () => {
    const bodies: string[] = [];
    let received!: () => void;
    const gotDelivery = new Promise<void>((resolve) => {
      received = resolve;
    });
    const collector = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        if (req.url === "/v1/traces") bodies.push(body);
        if (body.includes("webhook deliver gone")) received();
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const kernel = spawnRebunoDev(["--listen", "127.0.0.1:0", "--quiet", "--no-console"], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    });
    try {
      const url = (await kernel.waitForOutput(/rebuno-dev listening on (http:\/\/\S+)/))[1] as string;
      const json = { "content-type": "application/json" };
      // An agent nobody serves (port 9, discard, is closed on loopback): the delivery fails.
      const registered = await fetch(`${url}/v0/agents`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ id: "gone", webhook_url: "http://127.0.0.1:9/", secret: "s".repeat(32) }),
      });
      expect(registered.ok).toBe(true);
      const created = (await (
        await fetch(`${url}/v0/executions`, {
          method: "POST",
          headers: json,
          body: JSON.stringify({ agent_id: "gone", input: {} }),
        })
      ).json()) as { id: string };
      // Wait for the delivery attempt to be recorded, then stop: shutdown flushes the batch.
      for (;;) {
        const events = (await (await fetch(`${url}/v0/executions/${created.id}/events`)).json()) as {
          type: string;
        }[];
        if (events.some((e) => e.type === "dispatch.failed")) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await kernel.kill("SIGTERM")).code).toBe(0);
      await gotDelivery;
      expect(kernel.stdout()).toContain(`rebuno-dev exporting traces to ${endpoint}`);
      const all = bodies.join("\n");
      expect(all).toContain('"rebuno-dev"'); // service.name
      expect(all).toContain(created.id);
      expect(all).toContain(created.id.replaceAll("-", "")); // the execution's trace id (hex)
      expect(all).toContain("connection_refused");
    } finally {
      await kernel.kill();
      collector.close();
    }
  }, 30_000);
});
