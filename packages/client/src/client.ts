import {
  consoleLogger,
  createHttpCore,
  escapePathSegment,
  type HttpCore,
  type HttpRequest,
  queryString,
  type RetryMode,
  type TransportLogger,
} from "@rebuno/kernel-transport";
import {
  type Agent,
  type ApiKey,
  type Approval,
  type ApprovalStatus,
  type Event,
  type Execution,
  type ExecutionList,
  type ExecutionStatus,
  type ForkPoints,
  KernelError,
  type KernelProtocol,
  parseAgent,
  parseApiKey,
  parseApproval,
  parseEvent,
  parseExecution,
  parseExecutionList,
  parseForkPoints,
  parseStep,
  type Recording,
  resolveKernelProtocol,
  type Step,
} from "@rebuno/protocol";
import {
  type ApprovalDecisionOptions,
  approvalDecisionBody,
  type CreateApiKeyOptions,
  type CreateExecutionOptions,
  createApiKeyBody,
  createExecutionBody,
  type ForkOptions,
  forkBody,
  type PolicyTestRequest,
  type RegisterAgentOptions,
  registerAgentBody,
  setPolicyBody,
  testPolicyBody,
} from "./bodies.js";
import { agentFromGo, isMissingRoute, notSupported, wrongGenerationForAgent } from "./generation.js";
import {
  DEFAULT_EVENTS_LIMIT,
  type FollowEventsOptions,
  followEvents,
  type StreamOptions,
  streamDeltas,
  type WaitForTerminalOptions,
  waitForTerminal,
} from "./iterators.js";
import { type ClientOptions, processEnv, resolveConnection, resolveTimeoutMs } from "./options.js";
import { type ExportRecordingOptions, exportRecording } from "./recording.js";
import type { StreamDelta } from "./sse.js";
import { tracedCreate, tracedWait } from "./tracing.js";

/**
 * Version of `@rebuno/client`, as published. A constant, not a read of package.json at run time,
 * so the client loads in browsers and workers; verify/tests/runtimes/versions.test.ts keeps it equal to
 * package.json.
 */
export const CLIENT_VERSION: string = "0.1.0";

/** Filter and page of `Client.list` (query of `GET /v0/executions`). */
export interface ListExecutionsOptions {
  readonly agentId?: string | undefined;
  /** Exact session name. */
  readonly session?: string | undefined;
  readonly status?: ExecutionStatus | undefined;
  /** Return executions older than this id (the previous page's `nextCursor`). */
  readonly cursor?: string | undefined;
  /** Page size; the kernel defaults to 50 and caps at 200. */
  readonly limit?: number | undefined;
}

/** Options of `Client.events`. */
export interface EventsOptions {
  /** Only events with `eventSeq > afterSeq` (default 0). */
  readonly afterSeq?: number | undefined;
  /** At most this many (default 100, kernel maximum 1000). */
  readonly limit?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Options of `Client.listSteps`. */
export interface ListStepsOptions {
  /** `"terminal"` keeps succeeded, failed, denied and cancelled steps. */
  readonly status?: "terminal" | undefined;
}

/** Options of `Client.listApprovals`. */
export interface ListApprovalsOptions {
  /** Default `"pending"` (the kernel lists pending approvals, oldest first). */
  readonly status?: ApprovalStatus | undefined;
}

/** Per-call options accepted by the read methods. */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
}

/**
 * Result of `Client.testPolicy`, as the kernel sends it (snake_case). The kernel reports each
 * case's decision and a count of mismatches; the exact field names are not specified
 * (docs/protocol.md §4.14), so the object is passed through unchanged.
 */
export type PolicyTestResult = Readonly<Record<string, unknown>>;

// Retry rules, one per route class. The shared core retries network errors, timeouts and
// 502/503/504 only in "idempotent" mode; "unsent-only" retries only failures that prove the
// request never left this process (connection refused, DNS), which is safe for any request.
//
// - Reads (GET) and the read-only policy test: repeating them cannot change anything.
// - Upserts (register agent, set policy) and API-key revoke: sending the same body again leaves
//   the same state (revoke is documented as repeatable, 204 each time).
// - API-key rotate: each rotation invalidates the previous token; if the answer to the first one
//   was lost, its token is lost with it, and the retry hands back the one valid token. The end
//   state is the same as a single rotation from the caller's point of view.
// - Create with an idempotency key: the kernel returns the first execution for a repeated key.
const IDEMPOTENT: RetryMode = "idempotent";
// - Create without a key and fork: a second send makes a second execution.
// - Cancel, grant, deny, delete agent: a second send answers 409/404 although the first one
//   succeeded, so the caller would see an error for an operation that took effect. A blind retry
//   cannot tell that apart from a real conflict (e.g. the execution completed on its own).
// - Create API key: a second key (and token) would be minted.
const UNSENT_ONLY: RetryMode = "unsent-only";

function asArray(body: unknown, what: string): unknown[] {
  // The Aug 2026 kernel could answer `null` for an empty list; both forms mean "none".
  if (body === null || body === undefined) return [];
  if (!Array.isArray(body)) {
    throw new KernelError(`${what}: expected a JSON array`, { status: 200, code: "invalid_response" });
  }
  return body;
}

function asObject(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new KernelError(`${what}: expected a JSON object`, { status: 200, code: "invalid_response" });
  }
  return body as Record<string, unknown>;
}

function seg(value: string, what: string): string {
  return escapePathSegment(value, what);
}

/**
 * Bearer client for the Rebuno kernel API: executions, events, live streams, steps, approvals,
 * forks, agents, policies and API keys. Every result is a camelCase model parsed by
 * `@rebuno/protocol`; every failure is an error of the Rebuno family (`NotFoundError`,
 * `ConflictError`, `UnauthorizedError`, `NetworkError`, `TimeoutError`, …).
 *
 * Reads and other idempotent calls are retried with backoff on network errors, timeouts and
 * 502/503/504; calls whose repetition could change the outcome are not (see each method).
 *
 * With `protocol: "legacy"` (or `REBUNO_PROTOCOL=legacy`) it talks to the Go kernel snapshot: agent
 * answers in Go field names are read, and sessions, subagents, forks, policy tests, API keys and
 * other newer features throw `NotSupportedByKernel` naming the feature before sending. With either
 * setting, a newer route answered by a missing-route 404/405 throws the same error.
 */
export class Client {
  readonly #core: HttpCore;
  readonly #logger: TransportLogger;
  readonly #protocol: KernelProtocol;

  /**
   * @throws ConfigurationError when no base URL is given or set in `REBUNO_URL`, the URL or
   *   `timeoutMs` is invalid, or `protocol` / `REBUNO_PROTOCOL` names no known generation.
   */
  constructor(options: ClientOptions = {}) {
    const { baseUrl, apiKey } = resolveConnection(options);
    this.#protocol = resolveKernelProtocol(options.protocol, (options.env ?? processEnv()).REBUNO_PROTOCOL);
    this.#logger = options.logger ?? consoleLogger;
    this.#core = createHttpCore({
      baseUrl,
      fetch: options.fetch,
      timeoutMs: resolveTimeoutMs(options),
      userAgent: `rebuno-client/${CLIENT_VERSION}`,
      headers: apiKey === undefined ? undefined : { authorization: `Bearer ${apiKey}` },
      retry: options.retry,
      logger: this.#logger,
    });
  }

  /** The kernel base URL in use (after the `REBUNO_URL` fallback), without a trailing slash. */
  get baseUrl(): string {
    return this.#core.baseUrl.href;
  }

  /** The kernel protocol generation this client speaks (`protocol` option or `REBUNO_PROTOCOL`). */
  get protocol(): KernelProtocol {
    return this.#protocol;
  }

  /** Release idle keep-alive connections. Optional: idle connections never keep the process alive. */
  close(): Promise<void> {
    return this.#core.close();
  }

  #send(request: HttpRequest): Promise<unknown> {
    return this.#core.requestJson(request);
  }

  /**
   * A route of the newer protocol. The legacy generation does not have it: refuse before sending.
   * A kernel that answers it with a missing-route 404/405 (an older kernel behind a v1 setting)
   * gets the same typed error instead of a bare 404.
   */
  async #sendNewer(feature: string, request: HttpRequest): Promise<unknown> {
    const call = `${request.method} ${request.path.split("?")[0]}`;
    if (this.#protocol === "legacy") throw notSupported(this.#protocol, feature, call);
    try {
      return await this.#send(request);
    } catch (err) {
      if (isMissingRoute(err)) throw notSupported(this.#protocol, feature, call);
      throw err;
    }
  }

  /** Refuse an option the legacy generation does not have (its kernel would answer 400). */
  #refuseOnLegacy(given: boolean, feature: string, call: string): void {
    if (given && this.#protocol === "legacy") throw notSupported(this.#protocol, feature, call);
  }

  #agent(body: unknown): Agent {
    if (this.#protocol === "legacy") return parseAgent(agentFromGo(body));
    const hint = wrongGenerationForAgent(body);
    if (hint !== undefined) throw hint;
    return parseAgent(body);
  }

  // ------------------------------------------------------------------------------------------
  // Executions
  // ------------------------------------------------------------------------------------------

  /**
   * Start an execution of `agentId` (`POST /v0/executions`). `input` is left out of the body when
   * `undefined` (stored as `null`); an explicit `null` is sent. Returns the execution `running`,
   * or `pending` when its session is busy.
   *
   * Retried after a lost response only when `idempotencyKey` is set: the kernel then returns the
   * first execution for that key instead of creating another.
   * @throws NotSupportedByKernel with `protocol: "legacy"` when `session`, `parentExecutionId`,
   *   `idempotencyKey` or `spawnedBy` is given (that kernel refuses them), before anything is sent.
   */
  async create(agentId: string, input?: unknown, options: CreateExecutionOptions = {}): Promise<Execution> {
    const call = "POST /v0/executions";
    // The legacy kernel refuses these fields (400); silently dropping them would change meaning
    // (a lost idempotency key can start a second execution), so each one is a typed refusal.
    // Most specific first: a subagent create also carries an idempotency key.
    this.#refuseOnLegacy(options.spawnedBy !== undefined, "subagents", call);
    this.#refuseOnLegacy(Boolean(options.session || options.parentExecutionId), "sessions", call);
    this.#refuseOnLegacy(Boolean(options.idempotencyKey), "idempotency keys", call);
    const body = createExecutionBody(agentId, input, options);
    const keyed = options.idempotencyKey !== undefined && options.idempotencyKey !== "";
    return tracedCreate(agentId, async () =>
      parseExecution(
        await this.#send({
          method: "POST",
          path: "/v0/executions",
          body,
          retry: keyed ? IDEMPOTENT : UNSENT_ONLY,
        }),
      ),
    );
  }

  /** `GET /v0/executions/{id}`. @throws NotFoundError for an unknown id. */
  async get(id: string, options: CallOptions = {}): Promise<Execution> {
    const path = `/v0/executions/${seg(id, "execution id")}`;
    return parseExecution(await this.#send({ method: "GET", path, signal: options.signal }));
  }

  /** One page of executions, newest first (`GET /v0/executions`). Pass `nextCursor` on to page. */
  async list(options: ListExecutionsOptions = {}): Promise<ExecutionList> {
    this.#refuseOnLegacy(Boolean(options.session), "sessions", "GET /v0/executions");
    const query = queryString({
      agent_id: options.agentId || undefined,
      session: options.session || undefined,
      status: options.status || undefined,
      cursor: options.cursor || undefined,
      limit: options.limit,
    });
    return parseExecutionList(await this.#send({ method: "GET", path: `/v0/executions${query}` }));
  }

  /**
   * Every execution matching the filter, newest first, fetching pages (keyset paging by id) as
   * the loop asks for them. `limit` is the page size.
   */
  async *listAll(options: ListExecutionsOptions = {}): AsyncGenerator<Execution, void, undefined> {
    let cursor = options.cursor;
    for (;;) {
      const page = await this.list({ ...options, cursor });
      yield* page.executions;
      // A cursor that does not move would loop forever on a misbehaving server.
      if (page.nextCursor === undefined || page.nextCursor === cursor || page.executions.length === 0) return;
      cursor = page.nextCursor;
    }
  }

  /**
   * The state handed to this execution by its session parent (`GET …/previous`): the parent's
   * `state`, else its `output`, else `null` when there is no parent.
   */
  async previous(id: string): Promise<unknown> {
    const path = `/v0/executions/${seg(id, "execution id")}/previous`;
    const body = asObject(await this.#sendNewer("sessions", { method: "GET", path }), `GET ${path}`);
    return body.state ?? null;
  }

  /**
   * Events after `afterSeq`, ascending (`GET …/events`). Page by passing the last `eventSeq` as
   * the next `afterSeq`; {@link followEvents} does that for you.
   */
  async events(id: string, options: EventsOptions = {}): Promise<Event[]> {
    const afterSeq = options.afterSeq ?? 0;
    // after_seq only when non-zero, as the reference clients send it.
    const query = queryString({
      limit: options.limit ?? DEFAULT_EVENTS_LIMIT,
      after_seq: afterSeq === 0 ? undefined : afterSeq,
    });
    const path = `/v0/executions/${seg(id, "execution id")}/events${query}`;
    const body = await this.#send({ method: "GET", path, signal: options.signal });
    return asArray(body, `GET ${path}`).map((e) => parseEvent(e));
  }

  /**
   * Every event of the execution from `afterSeq` on, as they are appended: polls every `pollMs`
   * once caught up and ends after the execution is terminal and its whole log was yielded.
   */
  followEvents(id: string, options: FollowEventsOptions = {}): AsyncGenerator<Event, void, undefined> {
    return followEvents({ events: (i, o) => this.events(i, o), get: (i, o) => this.get(i, o) }, id, options);
  }

  /**
   * Live stream deltas published by the execution's steps (`GET …/stream`, server-sent events).
   * Only deltas published after the connection opens are delivered, and the kernel drops deltas
   * for a reader that falls 64 behind: each yielded {@link StreamDelta} carries a `gap` when
   * deltas of its step were missed. Keep-alive comments are skipped. The iteration ends when the
   * server closes the stream or `signal` aborts; a broken connection throws `NetworkError`.
   */
  stream(id: string, options: StreamOptions = {}): AsyncGenerator<StreamDelta, void, undefined> {
    const path = `/v0/executions/${seg(id, "execution id")}/stream`;
    return streamDeltas(this.#core, path, this.#logger, options);
  }

  /**
   * Cancel the execution (`POST …/cancel`); running steps are cancelled, pending approvals expire,
   * live subagents are cancelled too.
   * @throws ConflictError when the execution is already terminal.
   * Not retried after a lost response: the repeat would answer 409 although the cancel worked.
   */
  async cancel(id: string): Promise<void> {
    const path = `/v0/executions/${seg(id, "execution id")}/cancel`;
    await this.#send({ method: "POST", path, retry: UNSENT_ONLY });
  }

  /**
   * Wait until the execution is `completed`, `failed` or `cancelled`, and return it. Follows the
   * execution's SSE stream and answers as soon as the kernel announces the end; polls the status
   * every `pollMs` as the fallback (the only way on `protocol: "legacy"`, whose stream has no
   * such notice).
   * @throws TimeoutError after `timeoutMs` (default 5 min), with the last status in `details`.
   */
  waitForTerminal(id: string, options: WaitForTerminalOptions = {}): Promise<Execution> {
    // The legacy (Go) kernel's stream carries deltas only and never announces the end: poll there.
    const path = `/v0/executions/${seg(id, "execution id")}/stream`;
    const openStream =
      this.#protocol === "legacy"
        ? undefined
        : (signal: AbortSignal) =>
            this.#core.open({ method: "GET", path, headers: { accept: "text/event-stream" }, signal });
    return tracedWait(id, () => waitForTerminal((i, o) => this.get(i, o), id, options, openStream));
  }

  // ------------------------------------------------------------------------------------------
  // Steps and forks
  // ------------------------------------------------------------------------------------------

  /** The execution's steps ordered by step id (`GET …/steps`). */
  async listSteps(id: string, options: ListStepsOptions = {}): Promise<Step[]> {
    const query = queryString({ status: options.status || undefined });
    const path = `/v0/executions/${seg(id, "execution id")}/steps${query}`;
    return asArray(await this.#send({ method: "GET", path }), `GET ${path}`).map((s) => parseStep(s));
  }

  /**
   * One step (`GET …/steps/{stepId}`).
   * @throws NotFoundError when the step does not exist or belongs to another execution (unlike
   *   the agent transport's `getStep`, which answers `null`: here a missing step is an error, as
   *   for every other client read).
   */
  async getStep(id: string, stepId: string): Promise<Step> {
    const path = `/v0/executions/${seg(id, "execution id")}/steps/${seg(stepId, "step id")}`;
    return parseStep(await this.#send({ method: "GET", path }));
  }

  /**
   * Fork the execution at event `atSeq` (`POST …/fork`): settled steps up to there replay, the
   * rest runs live under the fork's policy. Not retried after a lost response (a repeat would
   * create a second fork).
   */
  async fork(id: string, options: ForkOptions): Promise<Execution> {
    const path = `/v0/executions/${seg(id, "execution id")}/fork`;
    return parseExecution(
      await this.#sendNewer("forks", { method: "POST", path, body: forkBody(options), retry: UNSENT_ONLY }),
    );
  }

  /**
   * The execution as a recording (format `rebuno.recording/1`): input and outcome, steps in
   * recording order with decisions and outcomes, events, and with `children` its subagents'
   * recordings. Reads only; what the kernel does not record is absent.
   * @throws NotFoundError for an unknown execution.
   */
  exportRecording(id: string, options: ExportRecordingOptions = {}): Promise<Recording> {
    return exportRecording(this, id, options);
  }

  /** Where the execution can be forked, with resource checkpoint coverage (`GET …/fork-points`). */
  async forkPoints(id: string): Promise<ForkPoints> {
    const path = `/v0/executions/${seg(id, "execution id")}/fork-points`;
    return parseForkPoints(await this.#sendNewer("forks", { method: "GET", path }));
  }

  // ------------------------------------------------------------------------------------------
  // Approvals
  // ------------------------------------------------------------------------------------------

  /** Approvals with `status` (default pending), oldest first (`GET /v0/approvals`). */
  async listApprovals(options: ListApprovalsOptions = {}): Promise<Approval[]> {
    // The legacy kernel lists pending approvals only and ignores `status`.
    const status = options.status ?? "pending";
    this.#refuseOnLegacy(status !== "pending", "approval history listings", "GET /v0/approvals");
    const path = `/v0/approvals${queryString({ status: options.status ?? "pending" })}`;
    return asArray(await this.#send({ method: "GET", path }), `GET ${path}`).map((a) => parseApproval(a));
  }

  /** `GET /v0/approvals/{id}`. @throws NotFoundError for an unknown id. */
  async getApproval(id: string): Promise<Approval> {
    return parseApproval(
      await this.#send({ method: "GET", path: `/v0/approvals/${seg(id, "approval id")}` }),
    );
  }

  /**
   * Grant a pending approval; the execution is re-dispatched and the gated step runs.
   * @throws ConflictError when the approval is no longer pending; ForbiddenError when `decidedBy`
   *   is not a listed approver. Not retried after a lost response (the repeat would answer 409).
   */
  async grantApproval(id: string, options: ApprovalDecisionOptions): Promise<void> {
    const path = `/v0/approvals/${seg(id, "approval id")}/grant`;
    await this.#send({ method: "POST", path, body: approvalDecisionBody(options), retry: UNSENT_ONLY });
  }

  /**
   * Deny a pending approval; the step is recorded as denied with the rationale (or
   * `approval_denied`) as its reason. Errors and retries as for {@link grantApproval}.
   */
  async denyApproval(id: string, options: ApprovalDecisionOptions): Promise<void> {
    const path = `/v0/approvals/${seg(id, "approval id")}/deny`;
    await this.#send({ method: "POST", path, body: approvalDecisionBody(options), retry: UNSENT_ONLY });
  }

  // ------------------------------------------------------------------------------------------
  // Agents and policies
  // ------------------------------------------------------------------------------------------

  /** Register or update an agent (`POST /v0/agents`, an upsert; retried like a read). */
  async registerAgent(options: RegisterAgentOptions): Promise<Agent> {
    this.#refuseOnLegacy(
      options.leaseTimeoutSeconds !== undefined,
      "per-agent lease timeouts",
      "POST /v0/agents",
    );
    return this.#agent(
      await this.#send({
        method: "POST",
        path: "/v0/agents",
        body: registerAgentBody(options),
        retry: IDEMPOTENT,
      }),
    );
  }

  /** Every registered agent, sorted by id. */
  async listAgents(): Promise<Agent[]> {
    return asArray(await this.#send({ method: "GET", path: "/v0/agents" }), "GET /v0/agents").map((a) =>
      this.#agent(a),
    );
  }

  /** `GET /v0/agents/{id}`. @throws NotFoundError for an unknown id. */
  async getAgent(id: string): Promise<Agent> {
    return this.#agent(await this.#send({ method: "GET", path: `/v0/agents/${seg(id, "agent id")}` }));
  }

  /** Delete an agent. Not retried after a lost response (the repeat would answer 404). */
  async deleteAgent(id: string): Promise<void> {
    await this.#send({ method: "DELETE", path: `/v0/agents/${seg(id, "agent id")}`, retry: UNSENT_ONLY });
  }

  /**
   * Replace the agent's policy bundle (`POST /v0/policies/{agentId}`).
   * @throws ValidationError (`invalid policy bundle: …`) when the YAML does not compile.
   */
  async setPolicy(agentId: string, bundleYaml: string): Promise<void> {
    const path = `/v0/policies/${seg(agentId, "agent id")}`;
    await this.#send({ method: "POST", path, body: setPolicyBody(bundleYaml), retry: IDEMPOTENT });
  }

  /**
   * Evaluate a bundle against cases and/or past executions without storing anything
   * (`POST /v0/policies/{agentId}/test`; needs `policies:write` and `executions:read`).
   */
  async testPolicy(agentId: string, request: PolicyTestRequest = {}): Promise<PolicyTestResult> {
    const path = `/v0/policies/${seg(agentId, "agent id")}/test`;
    const body = await this.#sendNewer("policy tests", {
      method: "POST",
      path,
      body: testPolicyBody(request),
      retry: IDEMPOTENT,
    });
    return asObject(body, `POST ${path}`);
  }

  // ------------------------------------------------------------------------------------------
  // API keys
  // ------------------------------------------------------------------------------------------

  /** Create a scoped API key. Its `token` is returned this once. Never retried after a send. */
  async createApiKey(options: CreateApiKeyOptions): Promise<ApiKey> {
    return parseApiKey(
      await this.#sendNewer("API keys", {
        method: "POST",
        path: "/v0/api-keys",
        body: createApiKeyBody(options),
        retry: UNSENT_ONLY,
      }),
    );
  }

  /** Metadata of every key, revoked ones included (no tokens). */
  async listApiKeys(): Promise<ApiKey[]> {
    return asArray(
      await this.#sendNewer("API keys", { method: "GET", path: "/v0/api-keys" }),
      "GET /v0/api-keys",
    ).map((k) => parseApiKey(k));
  }

  /**
   * Issue a new token for the key; the old one stops working.
   * @throws ConflictError for a revoked key.
   */
  async rotateApiKey(id: string): Promise<ApiKey> {
    const path = `/v0/api-keys/${seg(id, "API key id")}/rotate`;
    return parseApiKey(await this.#sendNewer("API keys", { method: "POST", path, retry: IDEMPOTENT }));
  }

  /** Revoke the key (repeatable). In-flight requests and streams may still finish. */
  async revokeApiKey(id: string): Promise<void> {
    await this.#sendNewer("API keys", {
      method: "DELETE",
      path: `/v0/api-keys/${seg(id, "API key id")}`,
      retry: IDEMPOTENT,
    });
  }
}
