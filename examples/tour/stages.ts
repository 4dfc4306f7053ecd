/**
 * The tour's five stages. Each starts executions through the client, prints their timeline as the
 * kernel records it, and checks what it claims: a stage whose facts do not hold throws, and the
 * tour exits 1.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { followTimeline, type TimelineEntry } from "@rebuno/cli";
import type { Client } from "@rebuno/client";
import type { DevKernel } from "@rebuno/dev-kernel";
import type { Execution } from "@rebuno/protocol";
import { type AgentOptions, type ServeHandle, toOpenAITools } from "@rebuno/sdk";
import { bodyRuns, EditorAgent, researcher, ShopAgent, SUPPORT_POLICY, SupportAgent } from "./agents.js";
import type { Narrator } from "./narrator.js";
import type { ReplaySeen } from "./observe.js";

export interface TourContext {
  readonly kernel: DevKernel;
  readonly url: string;
  readonly client: Client;
  readonly secret: string;
  readonly narrator: Narrator;
  /** Options every in-process agent is built with (secret, kernel URL, replay-observing fetch). */
  readonly agentOptions: AgentOptions;
  /** Count a replay seen by an agent in another process. */
  countReplay(): void;
}

const STAGES = 5;
/** Kernel events that add nothing for a reader of the tour (`rebuno exec watch` shows them all). */
const QUIET = new Set(["step.proposed", "step.executing", "dispatch.queued"]);

interface Served {
  readonly id: string;
  readonly webhookPath: string;
  serve(options: { host: string; port: number }): Promise<ServeHandle>;
}

function times(n: number): string {
  return n === 1 ? "once" : n === 2 ? "twice" : `${n} times`;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`tour check failed: ${what}`);
}

async function serveAgent(ctx: TourContext, agent: Served, servers: ServeHandle[], policy?: string) {
  const server = await agent.serve({ host: "127.0.0.1", port: 0 });
  servers.push(server);
  ctx.kernel.registerAgent({ id: agent.id, webhookUrl: server.url, secret: ctx.secret, policy });
}

/** Print an execution's timeline until it is terminal; `onEntry` may act (and is awaited). */
async function watch(
  ctx: TourContext,
  executionId: string,
  onEntry?: (entry: TimelineEntry) => Promise<void> | void,
): Promise<Execution> {
  const signal = AbortSignal.timeout(45_000);
  ctx.narrator.setLive(true);
  for await (const entry of followTimeline(ctx.client, executionId, { pollMs: 25, signal })) {
    if (!QUIET.has(entry.type)) ctx.narrator.timeline("", entry);
    await onEntry?.(entry);
  }
  ctx.narrator.setLive(false);
  const done = await ctx.client.get(executionId);
  check(
    done.status !== "running" && done.status !== "pending",
    `execution ${executionId} did not finish in 45 s`,
  );
  return done;
}

export async function runStages(
  ctx: TourContext,
): Promise<{ servers: ServeHandle[]; children: ChildProcess[] }> {
  const { narrator, client } = ctx;
  const servers: ServeHandle[] = [];
  const children: ChildProcess[] = [];
  process.on("exit", () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  });

  // --- 1. a decorated toolbox and a class agent ------------------------------------------------
  narrator.begin(
    "toolbox",
    1,
    STAGES,
    "A decorated toolbox and a class agent",
    "Every tool call is a step: the kernel records it and decides before the body runs.",
  );
  const shop = new ShopAgent(ctx.agentOptions);
  await serveAgent(ctx, shop, servers);
  const schemas = toOpenAITools(shop.shop);
  narrator.note(
    "The same @tool methods, as an LLM sees them (toOpenAITools, strict JSON Schema), shown once:",
  );
  narrator.block(
    schemas.map((t) => `${t.function.name}: ${JSON.stringify(t.function.parameters)}`).join("\n"),
    schemas,
  );
  const order = await client.create("shop", { sku: "tea", quantity: 2 });
  narrator.note(`client.create("shop", {sku: "tea", quantity: 2}) → execution ${order.id}`);
  const orderDone = await watch(ctx, order.id);
  check(orderDone.status === "completed", `shop execution completed (got ${orderDone.status})`);
  narrator.note(`output: ${JSON.stringify(orderDone.output)}`);

  // --- 2. a tool denied by policy --------------------------------------------------------------
  narrator.begin(
    "denial",
    2,
    STAGES,
    "A tool denied by policy",
    "The policy bundle refuses delete_account; the body never runs and the model gets a string it can act on.",
  );
  const support = new SupportAgent(ctx.agentOptions);
  await serveAgent(ctx, support, servers, SUPPORT_POLICY);
  narrator.note("policy rule never-delete-accounts: when target delete_account, deny");
  const close = await client.create("support", { ask: "close_account", customer: "c-42" });
  const closeDone = await watch(ctx, close.id);
  const modelReads = (closeDone.output as { modelReads?: unknown } | undefined)?.modelReads;
  check(
    typeof modelReads === "string" && modelReads.includes("not allowed"),
    "the denial reached the model as a string",
  );
  check(!bodyRuns.has("delete_account"), "the denied body never ran");
  narrator.note(`the LLM receives exactly: ${JSON.stringify(modelReads)}`, { modelReads });

  // --- 3. a step held for approval -------------------------------------------------------------
  narrator.begin(
    "approval",
    3,
    STAGES,
    "A step held for approval",
    "refund waits for a person: the execution parks without holding a worker, an operator grants it, it resumes.",
  );
  const refund = await client.create("support", { ask: "refund", order: "A-1001" });
  let granted = false;
  const refundDone = await watch(ctx, refund.id, async (entry) => {
    if (entry.type !== "approval.requested" || granted) return;
    granted = true;
    const parked = await waitForStatus(client, refund.id, "blocked");
    const pending = (await client.listApprovals({ status: "pending" })).filter(
      (a) => a.executionId === refund.id,
    );
    check(pending.length === 1, "one pending approval");
    narrator.note(
      `execution is ${parked.status}; refund body runs so far: ${bodyRuns.get("refund") ?? 0}. ` +
        `The operator grants approval ${pending[0]!.id} through the client:`,
    );
    narrator.note(
      `client.grantApproval("${pending[0]!.id}", {decidedBy: "ops@example.com", rationale: "customer called"})`,
    );
    await client.grantApproval(pending[0]!.id, {
      decidedBy: "ops@example.com",
      rationale: "customer called",
    });
  });
  check(granted, "an approval was requested");
  check(refundDone.status === "completed", `refund execution completed (got ${refundDone.status})`);
  check(bodyRuns.get("refund") === 1, "the approved refund ran exactly once");
  narrator.note(`resumed and completed; refund body ran once. output: ${JSON.stringify(refundDone.output)}`);

  // --- 4. SIGKILL mid-tool, then the redelivery ------------------------------------------------
  narrator.begin(
    "crash",
    4,
    STAGES,
    "The agent process SIGKILLed in the middle of a tool",
    "The kernel redelivers after the lease expires: safe_to_retry runs again, at_most_once comes back indeterminate.",
  );
  await crashStage(ctx, children);

  // --- 5. a subagent in a session, and a resumed run that replays -------------------------------
  narrator.begin(
    "subagent",
    5,
    STAGES,
    "A subagent call with a session, and a resumed run that replays",
    "The editor waits on a researcher without holding a worker; each rerun replays what was recorded.",
  );
  await serveAgent(ctx, researcher(ctx.agentOptions), servers);
  await serveAgent(ctx, new EditorAgent(ctx.agentOptions), servers);
  const edit = await client.create("editor", { title: "durable agents" });
  const editDone = await watch(ctx, edit.id);
  check(editDone.status === "completed", `editor execution completed (got ${editDone.status})`);
  const kids = (await client.list({ agentId: "researcher" })).executions.filter(
    (e) => e.spawnedBy?.executionId === edit.id,
  );
  for (const kid of [...kids].reverse()) {
    narrator.note(`subagent ${kid.id} (session ${kid.session}) → ${JSON.stringify(kid.output)}`);
  }
  const handlerRuns = bodyRuns.get("editor.run") ?? 0;
  check(
    kids.length === 2 && kids.every((k) => k.session === `researcher:${edit.id}`),
    "two children shared one session",
  );
  check(bodyRuns.get("outline") === 1 && handlerRuns >= 2, "the outline step ran once across handler reruns");
  narrator.note(
    `the editor's handler ran ${times(handlerRuns)}; the outline step's body ran ${times(bodyRuns.get("outline") ?? 0)}, ` +
      `research ${times(bodyRuns.get("research") ?? 0)} for 2 questions: every rerun replayed what was recorded.`,
  );
  return { servers, children };
}

async function waitForStatus(client: Client, id: string, status: string): Promise<Execution> {
  for (let i = 0; i < 400; i++) {
    const e = await client.get(id);
    if (e.status === status) return e;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`execution ${id} never became ${status}`);
}

interface AgentChild {
  readonly child: ChildProcess;
  readonly url: string;
  /** Resolves when the child printed a line matching `test`. */
  waitFor(test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/** Spawn the fulfilment agent (crash-agent.ts / .js next to this file) in a child process. */
function spawnAgent(
  ctx: TourContext,
  children: ChildProcess[],
  env: Record<string, string>,
  onLine: (line: Record<string, unknown>, pid: number) => void,
): Promise<AgentChild> {
  const self = fileURLToPath(import.meta.url);
  const script = fileURLToPath(new URL(`./crash-agent${extname(self)}`, import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, script], {
    env: { ...process.env, REBUNO_URL: ctx.url, REBUNO_AGENT_SECRET: ctx.secret, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    test: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  let buffered = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const text of parts.filter(Boolean)) {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      onLine(line, child.pid ?? 0);
      for (const w of waiters.filter((x) => x.test(line))) w.resolve(line);
    }
  });
  const waitFor = (test: (l: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const seen = lines.find(test);
      if (seen !== undefined) return resolve(seen);
      const timer = setTimeout(
        () => reject(new Error("the fulfilment agent did not report in 30 s")),
        30_000,
      );
      child.once("exit", (code, signal) => {
        if (signal !== "SIGKILL") reject(new Error(`the fulfilment agent exited (${code ?? signal})`));
      });
      waiters.push({
        test,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      });
    });
  return waitFor((l) => typeof l.listening === "string").then((l) => ({
    child,
    url: l.listening as string,
    waitFor,
  }));
}

async function crashStage(ctx: TourContext, children: ChildProcess[]): Promise<void> {
  const { narrator, client } = ctx;
  const dir = mkdtempSync(join(tmpdir(), "rebuno-tour-"));
  const ledger = join(dir, "ledger.jsonl");
  const bodies: { name: string; pid: number }[] = [];
  const onLine = (line: Record<string, unknown>, pid: number) => {
    if (typeof line.body === "string") {
      const again = bodies.some((b) => b.name === line.body);
      bodies.push({ name: line.body, pid });
      narrator.note(
        `agent pid ${pid}: ${line.body} body started${again ? " again (safe_to_retry: the kernel let it run)" : ""}`,
      );
    } else if (typeof line.reconcile === "string") {
      narrator.note(
        `agent pid ${pid}: charge_card threw ToolError "${line.reconcile}"; reconciling with find_charge`,
      );
    } else if (typeof line.replay === "object" && line.replay !== null) {
      ctx.countReplay();
      narrator.replay(`pid ${pid}`, line.replay as ReplaySeen);
    }
  };
  try {
    const first = await spawnAgent(ctx, children, { TOUR_HANG: "1", TOUR_LEDGER: ledger }, onLine);
    ctx.kernel.registerAgent({ id: "fulfilment", webhookUrl: first.url, secret: ctx.secret });
    narrator.note(`fulfilment agent serving in child process pid ${first.child.pid}`);
    const created = await client.create("fulfilment", { order: "A-1001", cents: 2599 });
    let killed = false;
    const watching = watch(ctx, created.id);
    await first.waitFor((l) => l.body === "print_label");
    await first.waitFor((l) => l.body === "charge_card");
    // The replacement is up (and registered) before the crash, as a second replica would be.
    const second = await spawnAgent(ctx, children, { TOUR_HANG: "0", TOUR_LEDGER: ledger }, onLine);
    ctx.kernel.registerAgent({ id: "fulfilment", webhookUrl: second.url, secret: ctx.secret });
    narrator.note(`replacement agent up as pid ${second.child.pid}; the charge is already in the ledger`);
    first.child.kill("SIGKILL");
    killed = true;
    narrator.note(`SIGKILL → pid ${first.child.pid}, while print_label and charge_card are both running`);
    narrator.note(
      "the kernel hears nothing more; once the 2 s lease expires it redelivers the execution (attempt 2)",
    );
    const done = await watching;
    check(killed, "the first agent was killed mid-tool");
    check(
      done.status === "completed",
      `fulfilment execution completed (got ${done.status}: ${done.failureReason ?? ""})`,
    );
    const labelRuns = bodies.filter((b) => b.name === "print_label");
    const chargeRuns = bodies.filter((b) => b.name === "charge_card");
    check(
      labelRuns.length === 2 && labelRuns[1]!.pid === second.child.pid,
      "print_label ran again after the crash",
    );
    check(chargeRuns.length === 1, "charge_card never ran twice");
    const charges = readFileSync(ledger, "utf8").split("\n").filter(Boolean).length;
    check(charges === 1, "the ledger holds exactly one charge");
    narrator.note(
      `print_label ran twice (pids ${labelRuns.map((b) => b.pid).join(", ")}); charge_card once; ledger: ${charges} charge. ` +
        `output: ${JSON.stringify(done.output)}`,
    );
    second.child.kill("SIGTERM");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
