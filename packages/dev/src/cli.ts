/**
 * `rebuno-dev`: run the dev kernel as a process. Prints `rebuno-dev listening on <url>` once
 * bound, then one line per step of every execution (unless `--quiet`), and drains and exits on
 * SIGINT/SIGTERM.
 */
import { createRequire } from "node:module";
import { consoleAssetsDir } from "@rebuno/console";
import {
  AnonymousNetworkAccessError,
  isLoopbackAddress,
  startDevKernel,
  storeExitCode,
} from "@rebuno/dev-kernel";
import { RebunoError } from "@rebuno/protocol";
import { ANONYMOUS_NETWORK_EXIT_CODE, parseCliArgs, USAGE } from "./cli-options.js";
import { startTimeline } from "./cli-timeline.js";
import { startOtlpTracing } from "./tracing.js";

const pkg = createRequire(import.meta.url)("../package.json") as { version: string };

/** The built console, or `undefined` (with the reason on stderr) when it was not built. */
function findConsole(): string | undefined {
  try {
    return consoleAssetsDir();
  } catch (err) {
    if (!RebunoError.isInstance(err)) throw err;
    process.stderr.write(`rebuno-dev: console not served: ${err.message}\n`);
    return undefined;
  }
}

/** The refusal in the command's own terms: why, and the two ways out as flags. */
function refusalMessage(err: AnonymousNetworkAccessError): string {
  return [
    `refusing to listen on ${err.address.includes(":") ? `[${err.address}]` : err.address}:${err.port}: it is not a loopback address, and without`,
    "auth anyone who can reach it could list every execution with its input and output, create and cancel",
    "executions, change policies and grant approvals. Either:",
    "  - require a token: --auth required (env REBUNO_AUTH=required) with REBUNO_BEARER_TOKEN set,",
    "    or bootstrap_token / api_keys in --config; or",
    "  - if this network is trusted, say so: --allow-anonymous (env REBUNO_ALLOW_ANONYMOUS=true).",
    "Or listen on loopback only: --listen 127.0.0.1:PORT.",
  ].join("\n");
}

async function main(): Promise<number> {
  const options = parseCliArgs(process.argv.slice(2), process.env);
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (options.version) {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  // The one place kernel and console meet: the library only knows a static-assets directory.
  const staticAssets = options.console ? findConsole() : undefined;
  // Registered before the kernel starts, so its first request is already traced.
  const tracing =
    options.otlpEndpoint === undefined ? undefined : startOtlpTracing({ endpoint: options.otlpEndpoint });
  const kernel = await startDevKernel({ ...options.kernel, staticAssets });
  let url: string;
  try {
    url = await kernel.listen({
      host: options.host,
      port: options.port,
      allowAnonymous: options.allowAnonymous,
    });
  } catch (err) {
    await kernel.close();
    await tracing?.shutdown();
    throw err;
  }
  const bound = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  if (options.kernel.devMode !== false && !isLoopbackAddress(bound)) {
    process.stderr.write(
      `rebuno-dev: WARNING: anonymous requests have full access and ${new URL(url).host} is not a loopback ` +
        "address (--allow-anonymous): anyone who can reach it can read every execution, create and cancel " +
        "executions, change policies and grant approvals\n",
    );
  }
  process.stdout.write(`rebuno-dev listening on ${url}\n`);
  const store = options.kernel.store;
  if (typeof store === "object" && "sqlite" in store) {
    // Say what an acknowledged write survives: the durability level is a deployment decision.
    const level = store.synchronous ?? "NORMAL";
    const survives = level === "FULL" ? "fsync per commit, survives power loss" : "survives a killed process";
    const unchecked = store.quickCheck === false ? " quick_check=off" : "";
    process.stdout.write(
      `rebuno-dev store sqlite:${store.sqlite} synchronous=${level} (${survives})${unchecked}\n`,
    );
  }
  if (staticAssets !== undefined) process.stdout.write(`rebuno-dev console at ${url}/\n`);
  if (options.otlpEndpoint !== undefined)
    process.stdout.write(`rebuno-dev exporting traces to ${options.otlpEndpoint}\n`);
  const timeline = options.quiet
    ? undefined
    : startTimeline(kernel.store, (line) => process.stdout.write(`${line}\n`), {
        onError: (error) => process.stderr.write(`rebuno-dev: timeline stopped: ${String(error)}\n`),
      });
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.stdout.write(`rebuno-dev: ${signal}, shutting down\n`);
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  timeline?.stop();
  await kernel.close();
  await tracing?.shutdown();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (AnonymousNetworkAccessError.isInstance(err)) {
      process.stderr.write(`rebuno-dev: ${refusalMessage(err)}\n`);
      process.exitCode = ANONYMOUS_NETWORK_EXIT_CODE;
      return;
    }
    // Configuration problems are the user's to fix: print the message, not a stack.
    const message = RebunoError.isInstance(err)
      ? err.message
      : err instanceof Error
        ? (err.stack ?? err.message)
        : String(err);
    process.stderr.write(`rebuno-dev: ${message}\n`);
    process.exitCode = storeExitCode(err) ?? 1; // store problems: distinct codes (store-errors.ts)
  },
);
