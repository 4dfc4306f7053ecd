/**
 * `Agent`: receives the kernel's webhooks and runs the handler for each dispatch. Class form
 * (`class Support extends Agent { static id = "support"; async run(input) {…} }` or `@agent`)
 * and function form (`new Agent("support", handler, options)`).
 */
import { type AgentTransport, createAgentTransport } from "@rebuno/kernel-transport";
import { ConfigurationError } from "@rebuno/protocol";
import type { ExecutionContext } from "../runtime/context.js";
import { consoleLogger, type Logger } from "../runtime/logger.js";
import type { SubagentClient } from "../runtime/subagent.js";
import type { StandardSchemaV1 } from "../standard-schema.js";
import { agentConfigOf } from "./agent-decorator.js";
import type { Result } from "./result.js";
import { type DispatchHost, type RunningDispatch, runDispatch } from "./run-dispatch.js";
import { type ServeHandle, type ServeOptions, serveAgent } from "./serve.js";
import {
  ACCEPTED,
  DUPLICATE,
  HEALTHY,
  isDelivery,
  MAX_WEBHOOK_BYTES,
  NOT_FOUND,
  parseDelivery,
  pathOf,
  TOO_LARGE,
  UNAUTHORIZED,
  verifyDelivery,
  type WebhookAnswer,
} from "./webhook.js";

/** A handler: receives the (validated) input, returns the output or a `Result`. */
export type AgentHandler<In, Out> = (
  input: In,
  ctx: ExecutionContext,
) => Out | Result<Out> | Promise<Out | Result<Out>>;

/** Options of an agent (every one falls back to the environment or a default). */
export interface AgentOptions {
  /** Webhook/agent secret; falls back to `REBUNO_AGENT_SECRET`. */
  readonly secret?: string | undefined;
  /** Kernel base URL; falls back to `REBUNO_URL`. */
  readonly baseUrl?: string | undefined;
  /** Default `/webhook`. */
  readonly webhookPath?: string | undefined;
  /** Per-request kernel timeout in ms (default 35 000). */
  readonly kernelTimeoutMs?: number | undefined;
  /** fetch used for kernel calls (an in-process kernel's handler in tests). */
  readonly fetch?: typeof globalThis.fetch | undefined;
  readonly logger?: Logger | undefined;
  /** Validates the execution input; failure fails the execution with `input_invalid: …`. */
  readonly inputSchema?: StandardSchemaV1 | undefined;
  /** Client `subagent()` uses by default (else one built from REBUNO_URL / REBUNO_API_KEY). */
  readonly client?: SubagentClient | undefined;
  /** Where env fallbacks are read from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

const DEFAULT_KERNEL_TIMEOUT_MS = 35_000;
// Finished dispatches remembered for dedupe of late duplicate deliveries.
const RECENT_LIMIT = 4096;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/**
 * A Rebuno agent. Subclass it and implement {@link Agent.run}, or pass a handler.
 *
 * @example
 * ```ts
 * class Support extends Agent<{ question: string }, string> {
 *   static override id = "support";
 *   readonly billing = new Billing();
 *   override async run(input: { question: string }) {
 *     return String(await this.billing.search({ query: input.question }));
 *   }
 * }
 * const handle = await new Support().serve({ port: 8000 });
 * ```
 */
export class Agent<In = unknown, Out = unknown> {
  /** The agent id, for the class form. */
  static id: string | undefined;
  /** Input schema, for the class form. */
  static inputSchema: StandardSchemaV1 | undefined;

  readonly id: string;
  readonly webhookPath: string;
  readonly logger: Logger;
  readonly inputSchema: StandardSchemaV1 | undefined;
  readonly #secret: string;
  readonly #transport: AgentTransport;
  readonly #handler: AgentHandler<In, Out> | undefined;
  readonly #host: DispatchHost;
  readonly #running = new Map<string, RunningDispatch>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #recent = new Set<string>();
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options?: AgentOptions);
  constructor(id: string, handler: AgentHandler<In, Out>, options?: AgentOptions);
  constructor(a?: string | AgentOptions, b?: AgentHandler<In, Out>, c?: AgentOptions) {
    const options: AgentOptions = (typeof a === "string" ? c : a) ?? {};
    const ctor = new.target as typeof Agent;
    const decorated = agentConfigOf(ctor);
    const id = typeof a === "string" ? a : (decorated?.id ?? ctor.id);
    if (typeof id !== "string" || id.trim() === "") {
      throw new ConfigurationError(
        "agentId must not be empty (pass new Agent(id, handler), or set `static id` / @agent(id) on the class)",
      );
    }
    if (typeof a === "string" && typeof b !== "function") {
      throw new ConfigurationError(`Agent '${id}': handler must be a function`);
    }
    const env =
      options.env ??
      (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ??
      {};
    const secret = nonEmpty(options.secret) ?? nonEmpty(env.REBUNO_AGENT_SECRET);
    if (secret === undefined)
      throw new ConfigurationError("secret required (set REBUNO_AGENT_SECRET or pass secret)");
    const baseUrl = nonEmpty(options.baseUrl) ?? nonEmpty(env.REBUNO_URL);
    if (baseUrl === undefined)
      throw new ConfigurationError("baseUrl required (set REBUNO_URL or pass baseUrl)");
    this.id = id;
    this.#handler = b;
    this.#secret = secret;
    this.webhookPath = options.webhookPath ?? "/webhook";
    this.logger = options.logger ?? consoleLogger;
    this.inputSchema = options.inputSchema ?? decorated?.inputSchema ?? ctor.inputSchema;
    this.#host = {
      id,
      logger: this.logger,
      inputSchema: this.inputSchema,
      client: options.client,
      invoke: (input, ctx) => this.run(input as In, ctx),
    };
    this.#transport = createAgentTransport({
      baseUrl: baseUrl.replace(/\/+$/, ""),
      agentId: id,
      secret,
      timeoutMs: options.kernelTimeoutMs ?? DEFAULT_KERNEL_TIMEOUT_MS,
      logger: this.logger,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  /**
   * The handler of the class form. Override it; the function form calls the handler passed to
   * the constructor.
   */
  run(input: In, ctx: ExecutionContext): Out | Result<Out> | Promise<Out | Result<Out>> {
    if (this.#handler === undefined) {
      throw new ConfigurationError(`Agent '${this.id}' has no handler: override run() or pass a handler`);
    }
    return this.#handler(input, ctx);
  }

  /**
   * Web-standard webhook handler: mount it in Hono, Next.js route handlers, Express (via an
   * adapter) or an edge runtime. Answers 200 at once and runs the dispatch in the background.
   */
  readonly fetch = async (request: Request): Promise<Response> => {
    const length = Number(request.headers.get("content-length") ?? "0");
    let answer: WebhookAnswer;
    if (request.method === "POST" && pathOf(request.url) === this.webhookPath && length > MAX_WEBHOOK_BYTES) {
      answer = TOO_LARGE;
    } else {
      const body =
        request.method === "POST" ? new Uint8Array(await request.arrayBuffer()) : new Uint8Array(0);
      answer = this.receive(request.method, request.url, request.headers.get("rebuno-signature"), body);
    }
    return new Response(answer.body, {
      status: answer.status,
      headers: { "content-type": "application/json" },
    });
  };

  /**
   * Handles one webhook request given its parts (used by `fetch` and `serve`).
   * @internal
   */
  receive(
    method: string,
    target: string,
    signature: string | null | undefined,
    body: Uint8Array,
  ): WebhookAnswer {
    const path = pathOf(target);
    if (method === "GET" && path === "/healthz") return HEALTHY;
    if (method !== "POST" || path !== this.webhookPath) return NOT_FOUND;
    if (body.byteLength > MAX_WEBHOOK_BYTES) return TOO_LARGE;
    if (!verifyDelivery(this.#secret, body, signature)) return UNAUTHORIZED;
    const delivery = parseDelivery(body);
    if (!isDelivery(delivery)) return delivery;
    if (this.#closed)
      return { status: 503, body: JSON.stringify({ code: "unavailable", message: "agent closing" }) };
    const key = `${delivery.executionId}\u0000${delivery.dispatchId}\u0000${delivery.attempt}`;
    const current = this.#running.get(delivery.executionId);
    // F40: same dispatch, same or older attempt → already handled; anything newer supersedes.
    if (
      current !== undefined &&
      current.delivery.dispatchId === delivery.dispatchId &&
      delivery.attempt <= current.delivery.attempt
    ) {
      return DUPLICATE;
    }
    if (this.#recent.has(key)) return DUPLICATE;
    current?.controller.abort(new Error("dispatch superseded by a newer delivery"));
    const run: RunningDispatch = { delivery, controller: new AbortController(), done: Promise.resolve() };
    this.#running.set(delivery.executionId, run);
    this.#remember(key);
    const task = runDispatch(this.#host, this.#transport, run).finally(() => {
      if (this.#running.get(delivery.executionId) === run) this.#running.delete(delivery.executionId);
      this.#tasks.delete(task);
    });
    run.done = task;
    this.#tasks.add(task);
    return ACCEPTED;
  }

  #remember(key: string): void {
    this.#recent.add(key);
    if (this.#recent.size > RECENT_LIMIT) {
      const oldest = this.#recent.values().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
  }

  /**
   * Serves the webhook on `node:http` and resolves once listening.
   *
   * @example
   * ```ts
   * const server = await agent.serve({ host: "127.0.0.1", port: 0 });
   * console.log(server.url); // http://127.0.0.1:53021/webhook
   * await server.close();
   * ```
   */
  serve(options: ServeOptions = {}): Promise<ServeHandle> {
    return serveAgent(this, options);
  }

  /** Waits for every dispatch in progress (including superseded ones) to finish. */
  async join(): Promise<void> {
    await Promise.allSettled([...this.#tasks]);
  }

  /**
   * Stops accepting deliveries, aborts every run (their next kernel call stops them; the kernel
   * redelivers after the lease expires) and waits for them to unwind. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      for (const run of this.#running.values()) run.controller.abort(new Error("agent closed"));
      await this.join();
      await this.#transport.close();
    })();
    return this.#closing;
  }
}
