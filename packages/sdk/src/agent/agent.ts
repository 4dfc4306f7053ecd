/**
 * `Agent`: receives the kernel's webhooks and runs the handler for each dispatch. Class form
 * (`class Support extends Agent { static id = "support"; async run(input) {…} }` or `@agent`)
 * and function form (`new Agent("support", handler, options)`).
 */
import { Client } from "@rebuno/client";
import { type AgentTransport, createAgentTransport } from "@rebuno/kernel-transport";
import {
  ConfigurationError,
  KERNEL_PROTOCOL_ENV,
  type KernelProtocol,
  resolveKernelProtocol,
} from "@rebuno/protocol";
import type { ExecutionContext } from "../runtime/context.js";
import { consoleLogger, type Logger } from "../runtime/logger.js";
import type { SubagentClient } from "../runtime/subagent.js";
import type { StandardSchemaV1 } from "../standard-schema.js";
import { agentConfigOf } from "./agent-decorator.js";
import { RejectionLog, type WebhookRejection, type WebhookRejectionCause } from "./rejections.js";
import type { Result } from "./result.js";
import { type DispatchHost, type RunningDispatch, runDispatch } from "./run-dispatch.js";
import { type RequestMeta, type ServeHandle, type ServeOptions, serveAgent } from "./serve.js";
import {
  ACCEPTED,
  CLOSING,
  DUPLICATE,
  HEALTHY,
  INTERNAL_ERROR,
  isDelivery,
  isJsonContentType,
  LEGACY_DEFAULT_LEASE_SECONDS,
  MALFORMED_TARGET,
  MAX_WEBHOOK_BYTES,
  METHOD_NOT_ALLOWED,
  NOT_FOUND,
  parseDelivery,
  pathOf,
  TOO_LARGE,
  TRUNCATED_BODY,
  UNSUPPORTED_MEDIA_TYPE,
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
  /** The official SDK's name for {@link kernelTimeoutMs} (also milliseconds). */
  readonly kernelTimeout?: number | undefined;
  /** fetch used for kernel calls (an in-process kernel's handler in tests). */
  readonly fetch?: typeof globalThis.fetch | undefined;
  readonly logger?: Logger | undefined;
  /** Validates the execution input; failure fails the execution with `input_invalid: …`. */
  readonly inputSchema?: StandardSchemaV1 | undefined;
  /** Client `subagent()` uses by default (else one built from REBUNO_URL / REBUNO_API_KEY). */
  readonly client?: SubagentClient | undefined;
  /** Where env fallbacks are read from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * The kernel protocol generation (falls back to `REBUNO_PROTOCOL`, default `"v1"`). `"legacy"`
   * talks to the older Go kernel snapshot: no attempt fencing, old request signatures, and the
   * SDK features that kernel lacks raise `NotSupportedByKernel`. Never guessed from a request.
   */
  readonly protocol?: KernelProtocol | undefined;
  /**
   * With `protocol: "legacy"`: the kernel's dispatch lease in seconds (its
   * `REBUNO_DISPATCH_LEASE_TIMEOUT`, default 120), which legacy webhooks do not carry. Heartbeats go
   * out every `min(lease / 3, 30 s)`.
   */
  readonly legacyLeaseTimeoutSeconds?: number | undefined;
  /**
   * Called for every webhook request the agent refuses (not rate-limited, unlike the log lines):
   * feed a metrics counter from it. Totals are also on `agent.rejectedWebhooks`.
   */
  readonly onRejectedWebhook?: ((rejection: WebhookRejection) => void) | undefined;
  /**
   * Warn when the event loop is blocked longer than this many ms while a dispatch holds its lease
   * (default 200; `false` disables). A blocked loop sends no heartbeats and stalls every other run.
   */
  readonly loopStallWarnMs?: number | false | undefined;
}

const DEFAULT_KERNEL_TIMEOUT_MS = 35_000;
/** Where code written for the official SDK finds the mapping of each name. */
const MIGRATION_HINT = "see docs/migration.md";
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
 * import { Agent, Toolbox, tool } from "@rebuno/sdk";
 * import { TestEnvironment } from "@rebuno/testing";
 *
 * class Billing extends Toolbox {
 *   @tool("search", { input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } })
 *   async search(args: { query: string }) {
 *     return [`invoice matching ${args.query}`];
 *   }
 * }
 *
 * class Support extends Agent<{ question: string }, string> {
 *   static override id = "support";
 *   readonly billing = new Billing();
 *   override async run(input: { question: string }) {
 *     return String(await this.billing.search({ query: input.question }));
 *   }
 * }
 *
 * // Deployed: `await new Support().serve({ port: 8000 })` behind the webhook URL the kernel calls.
 * const env = await TestEnvironment.create({ agents: [Support] });
 * const { output } = await env.run(Support, { question: "refund" }); // "invoice matching refund"
 * await env.teardown();
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
  /** The kernel protocol generation this agent speaks (see {@link AgentOptions.protocol}). */
  readonly protocol: KernelProtocol;
  readonly #secret: string;
  readonly #rejections: RejectionLog;
  readonly #legacyLeaseSeconds: number;
  readonly #transport: AgentTransport;
  #handler: AgentHandler<In, Out> | undefined;
  readonly #host: DispatchHost;
  readonly #running = new Map<string, RunningDispatch>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #recent = new Set<string>();
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options?: AgentOptions);
  /** The official SDK's form: bind the handler later with {@link bind} or `serve(options, handler)`. */
  constructor(id: string, options?: AgentOptions);
  constructor(id: string, handler: AgentHandler<In, Out>, options?: AgentOptions);
  constructor(a?: string | AgentOptions, b?: AgentHandler<In, Out> | AgentOptions, c?: AgentOptions) {
    const optionsSecond = typeof a === "string" && typeof b === "object" && b !== null;
    if (optionsSecond && c !== undefined) {
      throw new ConfigurationError(
        "new Agent(id, options) takes no third argument; pass new Agent(id, handler, options) instead",
      );
    }
    const options: AgentOptions = (optionsSecond ? (b as AgentOptions) : typeof a === "string" ? c : a) ?? {};
    const handler = typeof b === "function" ? b : undefined;
    const ctor = new.target as typeof Agent;
    const decorated = agentConfigOf(ctor);
    const id = typeof a === "string" ? a : (decorated?.id ?? ctor.id);
    if (typeof id !== "string" || id.trim() === "") {
      throw new ConfigurationError(
        "agentId must not be empty (pass new Agent(id, handler), or set `static id` / @agent(id) on the class)",
      );
    }
    if (typeof a === "string" && b !== undefined && handler === undefined && !optionsSecond) {
      throw new ConfigurationError(`Agent '${id}': handler must be a function`);
    }
    if (options.kernelTimeout !== undefined && options.kernelTimeoutMs !== undefined) {
      throw new ConfigurationError(
        "pass kernelTimeoutMs or kernelTimeout (the same setting in ms), not both",
      );
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
    this.#handler = handler;
    this.#secret = secret;
    this.webhookPath = options.webhookPath ?? "/webhook";
    this.logger = options.logger ?? consoleLogger;
    this.inputSchema = options.inputSchema ?? decorated?.inputSchema ?? ctor.inputSchema;
    this.protocol = resolveKernelProtocol(options.protocol, env[KERNEL_PROTOCOL_ENV]);
    const legacyLease = options.legacyLeaseTimeoutSeconds ?? LEGACY_DEFAULT_LEASE_SECONDS;
    if (typeof legacyLease !== "number" || !Number.isFinite(legacyLease) || legacyLease <= 0) {
      throw new ConfigurationError("legacyLeaseTimeoutSeconds must be a positive number of seconds");
    }
    this.#legacyLeaseSeconds = legacyLease;
    const stallMs = options.loopStallWarnMs;
    if (stallMs !== undefined && stallMs !== false && !(Number.isFinite(stallMs) && stallMs > 0)) {
      throw new ConfigurationError("loopStallWarnMs must be a positive number of milliseconds, or false");
    }
    this.#rejections = new RejectionLog({
      logger: this.logger,
      agentId: id,
      onRejected: options.onRejectedWebhook,
    });
    this.#host = {
      id,
      logger: this.logger,
      inputSchema: this.inputSchema,
      // A legacy agent's default subagent client speaks legacy too, so `subagent()` is refused with
      // NotSupportedByKernel("subagents") before anything is sent (the client is the one place
      // that decides which create options a kernel generation has).
      client:
        options.client ??
        (this.protocol === "legacy"
          ? lazyClient({
              baseUrl,
              protocol: "legacy",
              env,
              ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
            })
          : undefined),
      invoke: (input, ctx) => this.run(input as In, ctx),
      loopStallWarnMs: options.loopStallWarnMs,
      onForeignExecution: (executionId, owner) =>
        this.reject({
          cause: "wrong_agent",
          status: 200,
          message:
            owner === undefined
              ? `the kernel refused agent '${id}' access to execution ${executionId} (403): it belongs to another agent; not run`
              : `execution ${executionId} belongs to agent '${owner}', not '${id}'; not run`,
          executionId,
        }),
    };
    this.#transport = createAgentTransport({
      baseUrl: baseUrl.replace(/\/+$/, ""),
      agentId: id,
      secret,
      protocol: this.protocol,
      timeoutMs: options.kernelTimeoutMs ?? options.kernelTimeout ?? DEFAULT_KERNEL_TIMEOUT_MS,
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
      throw new ConfigurationError(
        `Agent '${this.id}' has no handler: override run(), pass new Agent(id, handler), or call agent.bind(handler) (${MIGRATION_HINT})`,
      );
    }
    return this.#handler(input, ctx);
  }

  /**
   * Sets the handler of an agent built as `new Agent(id, options)` (the official SDK's form).
   * Returns the agent. Binding twice, or binding a class-form agent that overrides `run`, is refused.
   */
  bind(handler: AgentHandler<In, Out>): this {
    if (typeof handler !== "function") {
      throw new ConfigurationError(`Agent '${this.id}': bind(handler) needs a function`);
    }
    if (this.#handler !== undefined && this.#handler !== handler) {
      throw new ConfigurationError(`Agent '${this.id}' already has a handler; bind it once`);
    }
    if (this.#overridesRun()) {
      throw new ConfigurationError(`Agent '${this.id}' overrides run(); bind(handler) would never be called`);
    }
    this.#handler = handler;
    return this;
  }

  #overridesRun(): boolean {
    return Object.getPrototypeOf(this).run !== Agent.prototype.run;
  }
  /**
   * Web-standard webhook handler: mount it in Hono, Next.js route handlers, Deno.serve, Bun.serve,
   * Express (via an adapter) or an edge runtime. Answers 200 at once and runs the dispatch in the
   * background. Never rejects: every refusal is a JSON error response.
   */
  readonly fetch = async (request: Request): Promise<Response> => {
    let answer: WebhookAnswer;
    const method = request.method;
    const target = request.url;
    const meta: RequestMeta = { contentType: request.headers.get("content-type") };
    try {
      const length = Number(request.headers.get("content-length") ?? "0");
      answer =
        this.#route(method, target, meta) ??
        (length > MAX_WEBHOOK_BYTES ? TOO_LARGE : await this.#readAndReceive(request));
    } catch (error) {
      answer = INTERNAL_ERROR;
      this.#internalError(error, method, target);
    }
    if (answer.rejection !== undefined && answer !== INTERNAL_ERROR)
      this.#reject(answer, method, target, meta);
    return new Response(answer.body, {
      status: answer.status,
      headers: { ...answer.headers, "content-type": "application/json" },
    });
  };

  /**
   * Handles one webhook request given its parts (used by `fetch` and `serve`). Never throws on
   * what the client sent; refusals are logged (rate-limited) and counted.
   * @internal
   */
  receive(
    method: string,
    target: string,
    signature: string | null | undefined,
    body: Uint8Array,
    meta: RequestMeta = {},
  ): WebhookAnswer {
    const answer =
      this.#route(method, target, meta) ??
      (body.byteLength > MAX_WEBHOOK_BYTES ? TOO_LARGE : this.#receiveBody(signature, body));
    if (answer.rejection !== undefined) this.#reject(answer, method, target, meta);
    return answer;
  }

  /**
   * Records a refused request (logged rate-limited, counted, passed to `onRejectedWebhook`).
   * @internal
   */
  reject(rejection: WebhookRejection): void {
    this.#rejections.record(rejection);
  }

  /** Refused webhook requests since the agent was created, per cause. */
  get rejectedWebhooks(): Readonly<Record<WebhookRejectionCause, number>> {
    return this.#rejections.counts;
  }

  #reject(answer: WebhookAnswer, method: string, target: string, meta: RequestMeta): void {
    const r = answer.rejection;
    if (r === undefined) return;
    this.reject({
      cause: r.cause,
      status: answer.status,
      message: r.message,
      method,
      target,
      remoteAddress: meta.remoteAddress,
    });
  }

  #internalError(error: unknown, method: string, target: string): void {
    this.reject({
      cause: "internal_error",
      status: 500,
      message: error instanceof Error ? error.message : String(error),
      method,
      target,
    });
  }

  /** The checks that need no body: target, route, method, content type. */
  #route(method: string, target: string, meta: RequestMeta): WebhookAnswer | undefined {
    const path = pathOf(target);
    if (path === undefined) return MALFORMED_TARGET;
    if (method === "GET" && path === "/healthz") return HEALTHY;
    if (path !== this.webhookPath) return NOT_FOUND;
    if (method !== "POST") return METHOD_NOT_ALLOWED;
    if (!isJsonContentType(meta.contentType)) return UNSUPPORTED_MEDIA_TYPE;
    return undefined;
  }

  async #readAndReceive(request: Request): Promise<WebhookAnswer> {
    const body = await readLimited(request);
    if (body === "too_large") return TOO_LARGE;
    if (body === "truncated") return TRUNCATED_BODY;
    return this.#receiveBody(request.headers.get("rebuno-signature"), body);
  }

  /** Signature, payload, dedupe and start of a delivery to the webhook path. */
  #receiveBody(signature: string | null | undefined, body: Uint8Array): WebhookAnswer {
    const refused = verifyDelivery(this.#secret, body, signature);
    if (refused !== undefined) return refused;
    const delivery = parseDelivery(body, this.protocol, this.#legacyLeaseSeconds);
    if (!isDelivery(delivery)) return delivery;
    if (this.#closed) return CLOSING;
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
    // A legacy kernel redelivers a reclaimed dispatch under the same id and no attempt number, so
    // only a run still in progress here makes it a duplicate.
    if (delivery.fenced && this.#recent.has(key)) return DUPLICATE;
    current?.controller.abort(new Error("dispatch superseded by a newer delivery"));
    const run: RunningDispatch = { delivery, controller: new AbortController(), done: Promise.resolve() };
    this.#running.set(delivery.executionId, run);
    if (delivery.fenced) this.#remember(key);
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
   * import { Agent } from "@rebuno/sdk";
   *
   * const agent = new Agent("hello", async (input: { name: string }) => `hello ${input.name}`, {
   *   secret: "hello-secret-0123456789",
   *   baseUrl: "http://127.0.0.1:8080",
   * });
   * const server = await agent.serve({ host: "127.0.0.1", port: 0 });
   * console.log(server.url); // http://127.0.0.1:53021/webhook
   * await server.close();
   * ```
   */
  serve(options: ServeOptions = {}, handler?: AgentHandler<In, Out>): Promise<ServeHandle> {
    // `serve(options, handler)` is the official SDK's form; it binds the handler first.
    if (handler !== undefined) this.bind(handler);
    if (this.#handler === undefined && !this.#overridesRun()) {
      return Promise.reject(
        new ConfigurationError(
          `Agent '${this.id}' has no handler: call agent.bind(handler) or agent.serve(options, handler) first (${MIGRATION_HINT})`,
        ),
      );
    }
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
      this.#rejections.flush();
    })();
    return this.#closing;
  }
}

/** Reads a Web request body up to the webhook limit; never throws. */
async function readLimited(request: Request): Promise<Uint8Array | "too_large" | "truncated"> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_WEBHOOK_BYTES) {
        reader.cancel().catch(() => {});
        return "too_large";
      }
      chunks.push(value);
    }
  } catch {
    return "truncated";
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** A `SubagentClient` that builds its `Client` on first use (it reads REBUNO_API_KEY then). */
function lazyClient(options: ConstructorParameters<typeof Client>[0]): SubagentClient {
  let client: Client | undefined;
  return { create: (...args) => (client ??= new Client(options)).create(...args) };
}
