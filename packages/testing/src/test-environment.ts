/**
 * `TestEnvironment`: the dev kernel in process with your agents registered, webhooks delivered to
 * `agent.fetch` and kernel calls answered by `kernel.fetch` — no sockets, no ports. Run an
 * execution and get it back finished, with its steps and events.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@rebuno/client";
import { type DevKernel, type DevKernelOptions, startDevKernel } from "@rebuno/dev-kernel";
import type { Event, Execution, Step } from "@rebuno/protocol";
import { Agent, type AgentOptions, type Logger } from "@rebuno/sdk";

/** What the environment needs from an agent (any `Agent<In, Out>` fits). */
export interface EnvironmentAgent {
  readonly id: string;
  readonly webhookPath: string;
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/** Builds an agent from the options the environment supplies (secret, kernel URL, fetch…). */
export type AgentFactory = (options: AgentOptions) => EnvironmentAgent;

/** An agent class whose constructor takes `AgentOptions` (the class form). */
export type AgentClass = new (options: AgentOptions) => EnvironmentAgent;

/** Options of {@link TestEnvironment.create}. */
export interface TestEnvironmentOptions {
  /** Agent classes (class form) or factories (`(options) => new Agent(id, handler, options)`). */
  readonly agents: readonly (AgentClass | AgentFactory)[];
  /** Policy bundle YAML for every agent, or per agent id. */
  readonly policy?: string | Readonly<Record<string, string>>;
  /** Kernel store (default memory). */
  readonly store?: DevKernelOptions["store"];
  /** Lease timeout in seconds (default 120); short leases make redelivery tests fast. */
  readonly leaseTimeoutSeconds?: number;
  /** Further dev-kernel options (dispatch tuning, clock…). */
  readonly kernel?: Omit<DevKernelOptions, "agents" | "store">;
  /** Agent logger (default: silent, so test output stays clean). */
  readonly logger?: Logger;
}

/** A finished execution with its history. */
export interface RunResult<Out = unknown> {
  readonly execution: Execution;
  readonly output: Out;
  readonly steps: readonly Step[];
  readonly events: readonly Event[];
}

const KERNEL_ORIGIN = "http://kernel.rebuno.test";
const silent: Logger = { warn: () => {}, error: () => {} };

function isClass(value: AgentClass | AgentFactory): value is AgentClass {
  return (value as { prototype?: unknown }).prototype instanceof Agent;
}

/**
 * The kernel lists steps by id (a hash); tests read them in the order they were first recorded,
 * i.e. by the sequence number of their first event.
 */
export function inRecordingOrder(steps: readonly Step[], events: readonly Event[]): Step[] {
  const firstSeq = new Map<string, number>();
  for (const event of events) {
    const stepId = (event.payload as { step_id?: unknown } | undefined)?.step_id;
    if (typeof stepId === "string" && !firstSeq.has(stepId)) firstSeq.set(stepId, event.eventSeq);
  }
  const seq = (s: Step) => firstSeq.get(s.stepId) ?? Number.MAX_SAFE_INTEGER;
  return [...steps].sort((a, b) => seq(a) - seq(b));
}

/**
 * The dev kernel plus agents, in one process.
 *
 * @example
 * ```ts
 * import { Agent, Toolbox, tool } from "@rebuno/sdk";
 * import { TestEnvironment } from "@rebuno/testing";
 * import { expect } from "vitest";
 *
 * class Shop extends Toolbox {
 *   @tool("reserve", {
 *     input: {
 *       type: "object",
 *       properties: { sku: { type: "string" }, quantity: { type: "number" } },
 *       required: ["sku", "quantity"],
 *     },
 *   })
 *   async reserve(args: { sku: string; quantity: number }) {
 *     return { reserved: args.quantity };
 *   }
 * }
 *
 * class ShopAgent extends Agent<{ sku: string; quantity: number }> {
 *   static override id = "shop";
 *   readonly shop = new Shop();
 *   override async run(input: { sku: string; quantity: number }) {
 *     return this.shop.reserve(input);
 *   }
 * }
 *
 * const env = await TestEnvironment.create({ agents: [ShopAgent] });
 * const { execution, steps } = await env.run(ShopAgent, { sku: "tea", quantity: 1 });
 * expect(execution.status).toBe("completed");
 * expect(steps.map((s) => s.target)).toEqual(["reserve"]);
 * await env.teardown();
 * ```
 */
export class TestEnvironment {
  readonly kernel: DevKernel;
  readonly client: Client;
  readonly #agents: Map<string, EnvironmentAgent>;
  readonly #byFactory: Map<unknown, EnvironmentAgent>;

  private constructor(
    kernel: DevKernel,
    client: Client,
    agents: Map<string, EnvironmentAgent>,
    byFactory: Map<unknown, EnvironmentAgent>,
  ) {
    this.kernel = kernel;
    this.client = client;
    this.#agents = agents;
    this.#byFactory = byFactory;
  }

  /** Starts the kernel, builds and registers the agents. */
  static async create(options: TestEnvironmentOptions): Promise<TestEnvironment> {
    const agents = new Map<string, EnvironmentAgent>();
    const byFactory = new Map<unknown, EnvironmentAgent>();
    const byHost = new Map<string, EnvironmentAgent>();
    const kernel = await startDevKernel({
      ...options.kernel,
      ...(options.store === undefined ? {} : { store: options.store }),
      dispatch: {
        ...options.kernel?.dispatch,
        ...(options.leaseTimeoutSeconds === undefined
          ? {}
          : { leaseTimeoutSeconds: options.leaseTimeoutSeconds }),
        // Webhooks go straight to the agent's Web handler.
        fetch: (request: Request) => {
          const agent = byHost.get(new URL(request.url).host);
          return agent === undefined
            ? Promise.resolve(new Response("no such agent", { status: 404 }))
            : agent.fetch(request);
        },
      },
    });
    const kernelFetch: typeof globalThis.fetch = (input, init) => kernel.fetch(new Request(input, init));
    const client = new Client({ baseUrl: KERNEL_ORIGIN, apiKey: "", fetch: kernelFetch });
    try {
      for (const entry of options.agents) {
        const secret = randomBytes(24).toString("hex");
        const agentOptions: AgentOptions = {
          secret,
          baseUrl: KERNEL_ORIGIN,
          fetch: kernelFetch,
          client,
          logger: options.logger ?? silent,
          env: {},
        };
        const agent = isClass(entry) ? new entry(agentOptions) : entry(agentOptions);
        if (agents.has(agent.id)) throw new Error(`two agents with id '${agent.id}'`);
        const host = `agent-${agents.size}.rebuno.test`;
        agents.set(agent.id, agent);
        byFactory.set(entry, agent);
        byHost.set(host, agent);
        const policy = typeof options.policy === "string" ? options.policy : options.policy?.[agent.id];
        kernel.registerAgent({
          id: agent.id,
          webhookUrl: `http://${host}${agent.webhookPath}`,
          secret,
          ...(policy === undefined ? {} : { policy }),
        });
      }
    } catch (error) {
      await kernel.close();
      throw error;
    }
    return new TestEnvironment(kernel, client, agents, byFactory);
  }

  /** The agent built from a class/factory passed to `create`, or by id. */
  agent<A extends EnvironmentAgent = EnvironmentAgent>(which: string | AgentClass | AgentFactory): A {
    const found = typeof which === "string" ? this.#agents.get(which) : this.#byFactory.get(which);
    if (found === undefined)
      throw new Error(`no agent ${typeof which === "string" ? which : which.name} in this environment`);
    return found as A;
  }

  /**
   * Creates an execution, waits until it is terminal (or blocked, with `untilBlocked`), and
   * returns it with its steps and events.
   */
  async run<Out = unknown>(
    agent: string | AgentClass | AgentFactory | EnvironmentAgent,
    input?: unknown,
    options: { readonly session?: string; readonly timeoutMs?: number } = {},
  ): Promise<RunResult<Out>> {
    const id = typeof agent === "object" ? agent.id : this.agent(agent).id;
    const created = await this.client.create(
      id,
      input,
      options.session === undefined ? {} : { session: options.session },
    );
    return this.wait<Out>(created.id, options.timeoutMs);
  }

  /** Waits for an execution to finish and collects its history. */
  async wait<Out = unknown>(executionId: string, timeoutMs = 20_000): Promise<RunResult<Out>> {
    const execution = await this.client.waitForTerminal(executionId, { timeoutMs, pollMs: 10 });
    return this.snapshot<Out>(execution.id);
  }

  /** Waits until an execution reaches `status` (e.g. `blocked` on an approval). */
  async waitForStatus(executionId: string, status: string, timeoutMs = 20_000): Promise<Execution> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const execution = await this.client.get(executionId);
      if (execution.status === status) return execution;
      if (Date.now() > deadline) {
        throw new Error(
          `execution ${executionId} is ${execution.status}, not ${status}, after ${timeoutMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The execution as it is now, with its steps and events. */
  async snapshot<Out = unknown>(executionId: string): Promise<RunResult<Out>> {
    const [execution, steps, events] = await Promise.all([
      this.client.get(executionId),
      this.client.listSteps(executionId),
      this.client.events(executionId, { limit: 1000 }),
    ]);
    return { execution, output: execution.output as Out, steps: inRecordingOrder(steps, events), events };
  }

  /** Closes the agents (abort + drain) and the kernel. */
  async teardown(): Promise<void> {
    await Promise.allSettled([...this.#agents.values()].map((a) => a.close()));
    await this.kernel.close();
  }
}
