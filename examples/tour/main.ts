/**
 * The Rebuno tour: what the kernel does for an agent, shown on the embedded dev kernel in one
 * process tree. Run it with `pnpm tour` from the repository root (`--json` for JSON lines,
 * `--keep` to leave the kernel running afterwards, `--store sqlite:tour.db` to keep what it recorded
 * in a SQLite file that `sqlite3 tour.db` opens afterwards).
 *
 * Stages: a decorated toolbox and a class agent; a tool denied by policy; a step held for
 * approval; the agent process killed mid-tool and the redelivery; a subagent in a session and a
 * resumed run that replays; a summary. Every execution's timeline is printed as it happens, read
 * from the kernel's event log through `@rebuno/client`.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { Client } from "@rebuno/client";
import { builtConsoleAssetsDir } from "@rebuno/console";
import { startDevKernel } from "@rebuno/dev-kernel";
import { ConfigurationError } from "@rebuno/protocol";
import { bodyRuns } from "./agents.js";
import { Narrator } from "./narrator.js";
import { replayObservingFetch } from "./observe.js";
import { runStages, type TourContext } from "./stages.js";
import { traceIfConfigured } from "./tracing.js";

const USAGE = `usage: pnpm tour [--json] [--keep] [--store memory|sqlite:PATH]

  --json   print every line as a JSON object (one per line)
  --keep   leave the kernel (and the tour's agents) running and print its URL
  --store  memory (default) or sqlite:PATH: the kernel's store, as rebuno-dev's --store`;

/** `--store memory|sqlite:PATH` as `startDevKernel`'s `store` option. */
function storeOption(flag: string | undefined): "memory" | { sqlite: string } {
  if (flag === undefined || flag === "memory") return "memory";
  if (flag.startsWith("sqlite:") && flag.length > "sqlite:".length)
    return { sqlite: flag.slice("sqlite:".length) };
  throw new ConfigurationError(`--store must be memory or sqlite:PATH, got ${JSON.stringify(flag)}`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      json: { type: "boolean" },
      keep: { type: "boolean" },
      store: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let store: ReturnType<typeof storeOption>;
  try {
    store = storeOption(values.store);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  // Before the kernel starts, so every execution's spans are exported from the first request.
  const stopTracing = await traceIfConfigured("rebuno-tour");
  const json = values.json === true;
  const color = !json && process.stdout.isTTY === true && !process.env.NO_COLOR;
  const narrator = new Narrator({ json, color, write: (t) => process.stdout.write(t) });
  const started = Date.now();

  // Short leases and a fast delivery loop, so the crash stage's redelivery takes seconds, not minutes.
  const kernel = await startDevKernel({
    store,
    dispatch: {
      leaseTimeoutSeconds: 2,
      maxAttempts: 10,
      pollMs: 20,
      reapIntervalMs: 200,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
    },
    onError: (error) => process.stderr.write(`kernel: ${String(error)}\n`),
    // The web console at `/`, as `rebuno-dev` serves it (when it was built).
    staticAssets: builtConsoleAssetsDir(),
  });
  const url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const client = new Client({ baseUrl: url, apiKey: "" });
  const secret = randomBytes(24).toString("hex");
  let replays = 0;
  const ctx: TourContext = {
    kernel,
    url,
    client,
    secret,
    narrator,
    agentOptions: {
      secret,
      baseUrl: url,
      client,
      logger: {
        warn: () => {},
        error: (...args: unknown[]) => process.stderr.write(`agent: ${args.map(String).join(" ")}\n`),
      },
      fetch: replayObservingFetch((seen) => {
        replays++;
        narrator.replay("", seen);
      }),
    },
    countReplay: () => replays++,
  };
  narrator.note(`dev kernel listening on ${url} (in this process; nothing else to install)`);

  const { servers, children } = await runStages(ctx);

  // --- summary ---------------------------------------------------------------------------------
  const executions = [];
  for await (const e of client.listAll()) executions.push(e);
  let steps = 0;
  let denials = 0;
  for (const e of executions) {
    const list = await client.listSteps(e.id);
    steps += list.length;
    denials += list.filter((s) => s.status === "denied").length;
  }
  const byStatus: Record<string, number> = {};
  for (const e of executions) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
  const seconds = Number(((Date.now() - started) / 1000).toFixed(1));
  const fields = {
    executions: executions.length,
    byStatus,
    steps,
    replays,
    denials,
    bodyRuns: Object.fromEntries(bodyRuns),
    seconds,
    kernelUrl: url,
  };
  const statusText = Object.entries(byStatus)
    .map(([s, n]) => `${n} ${s}`)
    .join(", ");
  narrator.summary(
    fields,
    [
      "",
      `━━ Summary: ${executions.length} executions (${statusText}), ${steps} steps recorded, ` +
        `${replays} replayed without running their bodies, ${denials} denied by policy, in ${seconds}s.`,
      `   Next: the CLI (docs/cli.md), docs/tour.md for what each stage showed, examples/hello for the smallest agent.`,
    ].join("\n"),
  );

  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  if (values.keep === true) {
    // The web console is announced only when this kernel really serves it at `/`.
    const home = await fetch(`${url}/`).catch(() => undefined);
    const consoleUrl =
      home?.ok === true && /html/.test(home.headers.get("content-type") ?? "") ? `${url}/` : undefined;
    await home?.body?.cancel();
    const consoleText = consoleUrl === undefined ? "" : ` (console: ${consoleUrl})`;
    narrator.note(`kernel left running at ${url}${consoleText}; try: rebuno --url ${url} exec ls`, {
      url,
      consoleUrl,
    });
    narrator.note("press Ctrl-C to stop");
    await new Promise<void>((resolve) => {
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
  }
  for (const server of servers) await server.close();
  await kernel.close();
  await stopTracing();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `tour failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
