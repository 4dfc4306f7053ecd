import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRateLimiter } from "@rebuno/policy";
import { ConfigurationError } from "@rebuno/protocol";
import { type AgentProvision, type DevKernelOptions, resolveConfig } from "./config.js";
import type { KernelContext } from "./engine/context.js";
import { Dispatcher } from "./engine/dispatcher.js";
import { Maintenance } from "./engine/maintenance.js";
import { PolicyCache } from "./engine/policies.js";
import { AnonymousNetworkAccessError, formatHostPort, isLoopbackAddress } from "./exposure.js";
import { onClientError } from "./http/client-error.js";
import { ConnectionTracker } from "./http/connections.js";
import { createCoreHandler } from "./http/core.js";
import { validateCorsOrigins, withCors } from "./http/cors.js";
import { serveFetch } from "./http/fetch-adapter.js";
import {
  createContinueListener,
  createExpectationListener,
  createNodeListener,
} from "./http/node-adapter.js";
import type { Route } from "./http/router.js";
import { loadStaticAssets, withStaticAssets } from "./http/static-assets.js";
import type { CoreHandler, CoreRequest, CoreResponse } from "./http/types.js";
import { createUuidV7Generator } from "./ids.js";
import { Metrics } from "./metrics.js";
import { agentExecutionRoutes } from "./routes/agent-execution.js";
import { agentRoutes, registerAgent } from "./routes/agents.js";
import { apiKeyRoutes, createApiKey } from "./routes/api-keys.js";
import { approvalRoutes } from "./routes/approvals.js";
import { executionRoutes } from "./routes/executions.js";
import { forkRoutes } from "./routes/forks.js";
import { opsRoutes } from "./routes/ops.js";
import { resourceRoutes } from "./routes/resources.js";
import { stepRoutes } from "./routes/steps.js";
import { streamRoutes } from "./routes/stream.js";
import { MemoryStore } from "./store/memory.js";
import type { Store } from "./store/types.js";
import { StreamBus } from "./stream-bus.js";

/** The route table, in matching order (it also orders a 405's `Allow` list). */
export const KERNEL_ROUTES: readonly Route[] = [
  ...opsRoutes,
  ...executionRoutes,
  ...stepRoutes,
  ...agentExecutionRoutes,
  ...streamRoutes,
  ...resourceRoutes,
  ...forkRoutes,
  ...approvalRoutes,
  ...agentRoutes,
  ...apiKeyRoutes,
];

/**
 * Every route the dev kernel serves, as method and path template (`:uuid` where an id goes), in
 * matching order: what a tool or a fuzzer needs to cover each route without the handlers.
 */
export const KERNEL_ROUTE_TEMPLATES: readonly { readonly method: string; readonly path: string }[] =
  KERNEL_ROUTES.map(({ method, path }) => ({ method, path }));

/** Request bodies above this are refused (docs/protocol.md §2: 10 MiB). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Options of {@link DevKernel.listen}. */
export interface ListenOptions {
  /** Address or host name to bind (default `127.0.0.1`; `""` binds every interface). */
  readonly host?: string | undefined;
  /** Port to bind (default 0: any free port; the returned URL has the one bound). */
  readonly port?: number | undefined;
  /**
   * In dev mode (anonymous requests have full access), binding anything but a loopback address
   * throws {@link AnonymousNetworkAccessError}; `true` says the network is trusted and binds anyway.
   * Ignored when `devMode` is false (every request then needs a token).
   */
  readonly allowAnonymous?: boolean | undefined;
}

/** A running dev kernel. */
export interface DevKernel {
  /** Base URL once {@link DevKernel.listen} resolved. */
  readonly url: string | undefined;
  /** The store (read it in tests; mutate only through HTTP). */
  readonly store: Store;
  /** Kernel counters (also served at `/metrics`). */
  readonly metrics: Metrics;
  /** Web handler: serve one request in process. */
  fetch(request: Request): Promise<Response>;
  /** Transport-neutral core (what both adapters call). */
  handle(request: CoreRequest): Promise<CoreResponse>;
  /**
   * Bind a `node:http` server (default 127.0.0.1, port 0) and return its base URL. In dev mode it
   * refuses a non-loopback address (decided from the bound address) unless `allowAnonymous`.
   */
  listen(options?: ListenOptions): Promise<string>;
  /** Register or update an agent (compiles `policy` first; throws on an invalid bundle). */
  registerAgent(agent: AgentProvision): void;
  /**
   * Run background work now: reap expired leases, sweep (approval expiry, deadlines, subagent
   * repair, retention), run a delivery pass, and wait for the deliveries it started. Lets tests
   * with a fake clock drive time deterministically.
   */
  tick(): Promise<void>;
  /** Stop accepting work, wait for deliveries and requests in flight, end streams, close the store. */
  close(): Promise<void>;
}

/** Open the configured store; the SQLite module (and its native addon) loads only when asked for. */
async function openStore(option: DevKernelOptions["store"]): Promise<Store> {
  if (option === undefined || option === "memory") return new MemoryStore();
  if ("sqlite" in option) {
    const { SqliteStore } = await import("./store/sqlite.js");
    const { sqlite: path, ...options } = option;
    return new SqliteStore(path, options);
  }
  return option;
}

/** Shared between the kernel object and its context: set once `close()` begins. */
interface Lifecycle {
  closing: boolean;
}

class RunningKernel implements DevKernel {
  url: string | undefined;
  private server: Server | undefined;
  private connections: ConnectionTracker | undefined;

  constructor(
    private readonly lifecycle: Lifecycle,
    private readonly ctx: KernelContext,
    private readonly core: CoreHandler,
    private readonly dispatcher: Dispatcher,
    private readonly maintenance: Maintenance,
  ) {}

  get store(): Store {
    return this.ctx.store;
  }

  get metrics(): Metrics {
    return this.ctx.metrics;
  }

  fetch(request: Request): Promise<Response> {
    return serveFetch(this.core, request, MAX_BODY_BYTES);
  }

  handle(request: CoreRequest): Promise<CoreResponse> {
    return this.core(request);
  }

  async listen(options: ListenOptions = {}): Promise<string> {
    if (this.server !== undefined) throw new ConfigurationError("the dev kernel is already listening");
    const host = options.host ?? "127.0.0.1";
    // Without a Host header node would answer a bare 400; `headerRefusal` answers it in JSON.
    const server = createServer({ keepAliveTimeout: 5_000, requireHostHeader: false });
    this.server = server;
    const connections = new ConnectionTracker(server);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        // `""` → no host: node binds every interface (`::`, or `0.0.0.0` without IPv6).
        server.listen(options.port ?? 0, host === "" ? undefined : host, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (err) {
      this.server = undefined; // not listening: a later listen() may try again
      throw err;
    }
    const address = server.address() as AddressInfo;
    // Decided from what was bound (a host name is resolved by then), before any request is served:
    // no request handler is attached yet, and the socket is closed again on refusal.
    if (this.ctx.config.devMode && options.allowAnonymous !== true && !isLoopbackAddress(address.address)) {
      this.server = undefined;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      throw new AnonymousNetworkAccessError(address.address, address.port, host);
    }
    this.connections = connections;
    const listener = connections.listener(
      createNodeListener(this.core, MAX_BODY_BYTES, (err) => this.ctx.reportError(err, "http")),
    );
    server.on("request", listener);
    server.on("checkContinue", createContinueListener(listener, MAX_BODY_BYTES));
    server.on("checkExpectation", createExpectationListener(listener));
    server.on("clientError", onClientError);
    this.url = `http://${formatHostPort(address.address, address.port)}`;
    return this.url;
  }

  registerAgent(agent: AgentProvision): void {
    registerAgent(this.ctx, agent);
  }

  async tick(): Promise<void> {
    this.maintenance.runOnce();
    this.dispatcher.pass();
    await this.dispatcher.idle();
  }

  async close(): Promise<void> {
    if (this.lifecycle.closing) return;
    // From here on /v0/ready answers 503, so a load balancer stops routing to us.
    this.lifecycle.closing = true;
    this.maintenance.stop();
    // Stop accepting connections first; requests already being served finish.
    const server = this.server;
    const serverClosed =
      server === undefined
        ? Promise.resolve()
        : new Promise<void>((resolve) => server.close(() => resolve()));
    // Idle keep-alive sockets (and sockets that become idle later, such as an SSE stream's once
    // it ends below) would otherwise hold close() until their keep-alive timeout.
    this.connections?.drain();
    await this.dispatcher.stop();
    // Open SSE responses never end by themselves.
    for (const [end, stop] of [...this.ctx.openStreams]) {
      stop();
      end();
    }
    await serverClosed;
    this.ctx.store.close();
  }
}

/**
 * Start a dev kernel: open the store, provision agents and API keys, start the delivery loop and
 * the lifecycle timers. Call `close()` when done.
 */
export async function startDevKernel(options: DevKernelOptions = {}): Promise<DevKernel> {
  const config = resolveConfig(options);
  const cors = options.cors === undefined ? undefined : validateCorsOrigins(options.cors);
  const assets = options.staticAssets === undefined ? undefined : loadStaticAssets(options.staticAssets);
  const clock = options.clock ?? Date.now;
  const store = await openStore(options.store);
  const onError =
    options.onError ??
    ((err: unknown, where: string) => {
      console.error(`rebuno-dev: ${where}:`, err);
    });
  let dispatcher: Dispatcher | undefined;
  const lifecycle: Lifecycle = { closing: false };
  const ctx: KernelContext = {
    store,
    clock,
    newId: options.idGenerator ?? createUuidV7Generator(clock),
    config,
    policies: new PolicyCache(config.judgeEndpoint),
    limiter: createRateLimiter(clock),
    bus: new StreamBus(),
    metrics: new Metrics(),
    openStreams: new Map(),
    fetch: options.dispatch?.fetch,
    replicaId: `rebuno-dev-${randomUUID().slice(0, 8)}`,
    wakeDispatcher: () => dispatcher?.wake(),
    isClosing: () => lifecycle.closing,
    reportError: onError,
  };
  for (const agent of options.agents ?? []) registerAgent(ctx, agent);
  for (const key of options.apiKeys ?? []) createApiKey(ctx, key);
  dispatcher = new Dispatcher(ctx);
  const maintenance = new Maintenance(ctx, dispatcher);
  const api = createCoreHandler(ctx, KERNEL_ROUTES);
  const routed = assets === undefined ? api : withStaticAssets(api, assets);
  const core = cors === undefined ? routed : withCors(routed, cors);
  maintenance.start();
  dispatcher.start();
  return new RunningKernel(lifecycle, ctx, core, dispatcher, maintenance);
}
