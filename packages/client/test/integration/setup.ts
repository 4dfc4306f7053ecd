/**
 * Integration environment: our `Client` against the real dev kernel, either in process (the
 * kernel's Web handler injected as the client's `fetch`) or over a loopback socket (`listen()`,
 * the client's own undici pool). Agent-side actions go through `@rebuno/kernel-transport` with
 * the same wiring, so every request is a real signed kernel request. Webhooks are captured in
 * process (the dispatch `fetch` hook) and verified with the agent secret: the tests only need the
 * lease they carry.
 */

import { type DevKernel, type DevKernelOptions, startDevKernel } from "@rebuno/dev-kernel";
import { type AgentTransport, createAgentTransport, type DispatchLease } from "@rebuno/kernel-transport";
import { parseWebhookPayload, verifyWebhookSignature, type WebhookPayload } from "@rebuno/protocol";
import { expect, vi } from "vitest";
import { Client } from "../../src/index.js";

/** How the client reaches the kernel. */
export type Mode = "in-process" | "loopback";
/** Both modes: every integration suite runs once per mode (`describe.each(MODES)`). */
export const MODES: readonly Mode[] = ["in-process", "loopback"];

/** Full-access token of the kernel (dev mode off, so missing/unknown tokens are refused). */
export const BOOTSTRAP = "bootstrap-token-for-tests";
/** Base URL used in process (never resolved: the kernel handler answers directly). */
const IN_PROCESS_URL = "http://kernel.test";

/** Agents every environment provisions: `alpha` unrestricted, `gated` behind approvals. */
export const GATED_BUNDLE = `default_action: allow
rules:
  - id: refunds
    when: { target: refund }
    then:
      decision: require_approval
      reason: refunds are reviewed
      approval_config: { approvers: ["alice"], timeout: 10m, message: check the amount }
  - id: no-prod
    when: { target: drop_db }
    then: { decision: deny, reason: production is off limits }
`;

const SECRETS: Readonly<Record<string, string>> = { alpha: "alpha-secret", gated: "gated-secret" };

/** A running kernel plus factories for clients and agent transports wired the same way. */
export interface Env {
  readonly mode: Mode;
  readonly kernel: DevKernel;
  readonly baseUrl: string;
  /** A client with `apiKey` (default: the bootstrap token; `""` sends no Authorization header). */
  client(apiKey?: string): Client;
  /** An agent transport signing as `agentId` (default `alpha`). */
  agent(agentId?: string): AgentTransport;
  /** The lease of the (index+1)-th webhook delivered for the execution (waits up to 5 s). */
  lease(executionId: string, index?: number): Promise<DispatchLease>;
  /** Webhooks delivered so far for the execution. */
  webhooks(executionId: string): WebhookPayload[];
  close(): Promise<void>;
}

function quietLogger() {
  return { warn: vi.fn(), error: vi.fn(), debug: vi.fn() };
}

/** Start a kernel for `mode`. Extra options are merged over the defaults. */
export async function startEnv(mode: Mode, options: Partial<DevKernelOptions> = {}): Promise<Env> {
  const delivered: WebhookPayload[] = [];
  const waiters = new Set<() => void>();
  const kernel = await startDevKernel({
    devMode: false,
    bootstrapToken: BOOTSTRAP,
    agents: [
      { id: "alpha", webhookUrl: "http://agents.test/alpha", secret: SECRETS.alpha! },
      { id: "gated", webhookUrl: "http://agents.test/gated", secret: SECRETS.gated!, policy: GATED_BUNDLE },
    ],
    onError: (err, where) => {
      throw new Error(`kernel background error in ${where}: ${String(err)}`);
    },
    ...options,
    dispatch: {
      // Webhooks are answered 200 in process; the signature is checked like a real agent would.
      fetch: async (req) => {
        const text = await req.text();
        const agentId = new URL(req.url).pathname.slice(1);
        expect(
          verifyWebhookSignature(SECRETS[agentId] ?? "", text, req.headers.get("rebuno-signature")),
        ).toBe(true);
        delivered.push(parseWebhookPayload(JSON.parse(text)));
        for (const wake of waiters) wake();
        return new Response(null, { status: 200 });
      },
      pollMs: 10,
      ...options.dispatch,
    },
  });
  const baseUrl = mode === "loopback" ? await kernel.listen() : IN_PROCESS_URL;
  const kernelFetch = mode === "in-process" ? (req: Request) => kernel.fetch(req) : undefined;
  const closers: (() => Promise<void>)[] = [];

  const forExecution = (id: string) => delivered.filter((w) => w.executionId === id);

  return {
    mode,
    kernel,
    baseUrl,
    client(apiKey = BOOTSTRAP) {
      const c = new Client({
        baseUrl,
        apiKey,
        env: {},
        fetch: kernelFetch,
        retry: { baseMs: 1, maxMs: 5 },
        logger: quietLogger(),
      });
      closers.push(() => c.close());
      return c;
    },
    agent(agentId = "alpha") {
      const t = createAgentTransport({
        baseUrl,
        agentId,
        secret: SECRETS[agentId] ?? "",
        fetch: kernelFetch,
        retry: { baseMs: 1, maxMs: 5 },
        logger: quietLogger(),
      });
      closers.push(() => t.close());
      return t;
    },
    async lease(executionId, index = 0) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const w = forExecution(executionId)[index];
        if (w !== undefined) {
          return {
            dispatchId: w.dispatchId,
            attempt: w.dispatchAttempt,
            timeoutMs: w.leaseTimeoutSeconds * 1000,
          };
        }
        if (Date.now() > deadline) throw new Error(`no webhook #${index + 1} for ${executionId}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, 50);
          waiters.add(wake);
        });
      }
    },
    webhooks: forExecution,
    async close() {
      for (const close of closers.splice(0)) await close();
      await kernel.close();
    },
  };
}
