/**
 * `rebuno-dev`: run the dev kernel as a process. Prints `rebuno-dev listening on <url>` once
 * bound, and drains and exits on SIGINT/SIGTERM.
 */
import { RebunoError } from "@rebuno/protocol";
import { parseCliArgs, USAGE } from "./cli-options.js";
import { startDevKernel } from "./kernel.js";

async function main(): Promise<number> {
  const options = parseCliArgs(process.argv.slice(2), process.env);
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const kernel = await startDevKernel(options.kernel);
  const url = await kernel.listen({ host: options.host, port: options.port });
  process.stdout.write(`rebuno-dev listening on ${url}\n`);
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
  await kernel.close();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Configuration problems are the user's to fix: print the message, not a stack.
    const message = RebunoError.isInstance(err)
      ? err.message
      : err instanceof Error
        ? (err.stack ?? err.message)
        : String(err);
    process.stderr.write(`rebuno-dev: ${message}\n`);
    process.exitCode = 1;
  },
);
