/**
 * Test harness: a dev kernel driven only through HTTP (`kernel.fetch`), with a fake clock,
 * hand-signed agent requests (protocol's `signRequest`) and webhooks captured in process.
 */
import { signRequest, verifyWebhookSignature } from "@rebuno/protocol";
import { expect } from "vitest";
import type { AgentProvision, DevKernelOptions } from "../src/config.js";
import { type DevKernel, startDevKernel } from "../src/kernel.js";
import type { StoreFactory } from "./stores.js";

export const BASE = "http://kernel.test";
export const T0 = Date.UTC(2026, 6, 7, 12, 0, 0);

/** A parsed HTTP answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for reading JSON bodies
  readonly body: any;
}

/** The webhook body. */
export interface Webhook {
  readonly execution_id: string;
  readonly dispatch_id: string;
  readonly dispatch_attempt: number;
  readonly lease_timeout_seconds: number;
}

/** The lease headers an agent sends. */
export interface Lease {
  readonly dispatchId: string;
  readonly attempt: number;
}

export function leaseOf(w: Webhook): Lease {
  return { dispatchId: w.dispatch_id, attempt: w.dispatch_attempt };
}

/** Options of {@link Harness.agent}. */
export interface AgentCall {
  readonly body?: unknown;
  /** Raw body text (overrides `body`). */
  readonly raw?: string;
  readonly lease?: Lease | undefined;
  readonly agentId?: string;
  readonly secret?: string;
  /** Unix seconds for `Rebuno-Timestamp` (default: the fake clock). */
  readonly timestamp?: number | string;
  /** Replace the computed signature. */
  readonly signature?: string;
  readonly extraHeaders?: Record<string, string>;
}

export const DEFAULT_AGENTS: AgentProvision[] = [
  { id: "alpha", webhookUrl: "http://agents.test/alpha", secret: "alpha-secret" },
  { id: "beta", webhookUrl: "http://agents.test/beta", secret: "beta-secret" },
];

/** A kernel plus the fake clock and the webhook inbox. */
export class Harness {
  now = T0;
  readonly webhooks: Webhook[] = [];
  /** Status the fake agents answer webhooks with. */
  webhookStatus = 200;
  private waiters: (() => void)[] = [];
  private gate: Promise<void> | undefined;
  private readonly problems: string[] = [];
  kernel!: DevKernel;
  private readonly secrets = new Map<string, string>();

  static async start(store: StoreFactory, options: Partial<DevKernelOptions> = {}): Promise<Harness> {
    const h = new Harness();
    const agents = options.agents ?? DEFAULT_AGENTS;
    for (const a of agents) h.secrets.set(a.id, a.secret);
    h.kernel = await startDevKernel({
      store: store.create(),
      clock: () => h.now,
      onError: (err, where) => {
        throw new Error(`kernel background error in ${where}: ${String(err)}`);
      },
      ...options,
      agents,
      dispatch: {
        fetch: async (req) => h.receive(req),
        backoffBaseMs: 1000,
        ...options.dispatch,
      },
    });
    return h;
  }

  private async receive(req: Request): Promise<Response> {
    const text = await req.text();
    if (this.gate !== undefined) await this.gate;
    const agentId = new URL(req.url).pathname.slice(1);
    const secret = this.secrets.get(agentId) ?? "";
    const w = JSON.parse(text) as Webhook;
    // Assertions here would be swallowed by the dispatcher (a throwing fetch is a failed
    // delivery), so problems are collected and asserted in close().
    if (!verifyWebhookSignature(secret, text, req.headers.get("rebuno-signature"))) {
      this.problems.push(`bad webhook signature for ${agentId}`);
      return new Response(null, { status: 401 });
    }
    if (req.headers.get("rebuno-execution-id") !== w.execution_id) {
      this.problems.push("Rebuno-Execution-Id header does not match the body");
    }
    this.webhooks.push(w);
    for (const wake of this.waiters.splice(0)) wake();
    return new Response(null, { status: this.webhookStatus });
  }

  /** Hold every webhook answer until the returned function is called. */
  holdWebhooks(): () => void {
    let release: () => void = () => {};
    this.gate = new Promise<void>((resolve) => {
      release = () => {
        this.gate = undefined;
        resolve();
      };
    });
    return release;
  }

  /** Wait (real time, bounded) until a webhook for `executionId` beyond `seen` arrives. */
  async webhook(executionId: string, attempt?: number): Promise<Webhook> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const w = this.webhooks.findLast(
        (x) => x.execution_id === executionId && (attempt === undefined || x.dispatch_attempt === attempt),
      );
      if (w !== undefined) return w;
      if (Date.now() > deadline) throw new Error(`no webhook for ${executionId}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Wait for the (count+1)-th webhook of an execution and return it. */
  async nextWebhook(executionId: string, count: number): Promise<Webhook> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const list = this.webhooksFor(executionId);
      if (list.length > count) return list[count]!;
      if (Date.now() > deadline) throw new Error(`no webhook #${count + 1} for ${executionId}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Webhooks delivered so far for an execution. */
  webhooksFor(executionId: string): Webhook[] {
    return this.webhooks.filter((w) => w.execution_id === executionId);
  }

  advance(ms: number): void {
    this.now += ms;
  }

  async close(): Promise<void> {
    await this.kernel.close();
    expect(this.problems).toEqual([]);
  }

  /** A bearer/anonymous client request. */
  async client(method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    return this.send(new Request(BASE + path, init));
  }

  /** A signed agent request. */
  async agent(method: string, path: string, call: AgentCall = {}): Promise<Answer> {
    const agentId = call.agentId ?? "alpha";
    const secret = call.secret ?? this.secrets.get(agentId) ?? "";
    const body = call.raw ?? (call.body === undefined ? "" : JSON.stringify(call.body));
    const timestamp = String(call.timestamp ?? Math.floor(this.now / 1000));
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "rebuno-agent-id": agentId,
      "rebuno-timestamp": timestamp,
    };
    if (call.lease !== undefined) {
      headers["rebuno-dispatch-id"] = call.lease.dispatchId;
      headers["rebuno-dispatch-attempt"] = String(call.lease.attempt);
    }
    headers["rebuno-signature"] =
      call.signature ??
      signRequest({
        secret,
        method,
        target: path,
        timestamp,
        dispatchId: call.lease?.dispatchId,
        dispatchAttempt: call.lease?.attempt,
        body,
      });
    Object.assign(headers, call.extraHeaders);
    const init: RequestInit = { method, headers };
    if (method !== "GET" && method !== "HEAD") init.body = body;
    return this.send(new Request(BASE + path, init));
  }

  private async send(req: Request): Promise<Answer> {
    const res = await this.kernel.fetch(req);
    const text = await res.text();
    let body: unknown;
    if (text !== "" && (res.headers.get("content-type") ?? "").includes("json")) body = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body };
  }

  /** Create an execution and return its JSON (asserts 201). */
  // biome-ignore lint/suspicious/noExplicitAny: JSON
  async create(agentId = "alpha", extra: Record<string, unknown> = {}): Promise<any> {
    const r = await this.client("POST", "/v0/executions", { agent_id: agentId, input: { q: 1 }, ...extra });
    expect(r.status, r.text).toBe(201);
    return r.body;
  }

  /** Create an execution and wait for its first webhook. */
  async started(
    agentId = "alpha",
    extra: Record<string, unknown> = {},
  ): Promise<{ id: string; lease: Lease }> {
    const e = await this.create(agentId, extra);
    const w = await this.webhook(e.id);
    return { id: e.id, lease: leaseOf(w) };
  }

  /** Submit a step and return the answer. */
  submit(id: string, lease: Lease, body: Record<string, unknown>, agentId = "alpha"): Promise<Answer> {
    return this.agent("POST", `/v0/executions/${id}/steps`, { body, lease, agentId });
  }

  complete(id: string, lease: Lease, stepId: string, result: unknown, agentId = "alpha"): Promise<Answer> {
    return this.agent("POST", `/v0/executions/${id}/steps/${stepId}/complete`, {
      body: { result },
      lease,
      agentId,
    });
  }

  // biome-ignore lint/suspicious/noExplicitAny: JSON
  async events(id: string): Promise<any[]> {
    const r = await this.client("GET", `/v0/executions/${id}/events?limit=1000`);
    expect(r.status).toBe(200);
    return r.body;
  }

  async eventTypes(id: string): Promise<string[]> {
    return (await this.events(id)).map((e) => e.type);
  }

  // biome-ignore lint/suspicious/noExplicitAny: JSON
  async execution(id: string): Promise<any> {
    const r = await this.client("GET", `/v0/executions/${id}`);
    expect(r.status).toBe(200);
    return r.body;
  }
}
