/**
 * What every command gets: the parsed global options, a client built from them on first use, and
 * the output settings.
 */
import { Client } from "@rebuno/client";
import { type KernelProtocol, resolveKernelProtocol } from "@rebuno/protocol";
import type { Command } from "commander";
import { UsageError } from "./exit-codes.js";
import { parsePositiveInt } from "./input.js";
import { type CliIo, useColor } from "./output.js";

/** Options accepted before or after any command. */
export interface GlobalOptions {
  readonly url?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly protocol?: string | undefined;
  readonly json?: boolean | undefined;
  readonly timeout?: string | undefined;
}

export interface CommandContext {
  readonly io: CliIo;
  readonly json: boolean;
  readonly color: boolean;
  readonly protocol: KernelProtocol;
  /** The kernel client (built on first use: `policy test` never needs one). */
  client(): Client;
  /** Set the process exit code for a command that succeeds with a non-zero outcome (`exec watch`). */
  setExitCode(code: number): void;
}

export function commandContext(
  command: Command,
  io: CliIo,
  setExitCode: (code: number) => void,
): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const protocol = resolveKernelProtocol(options.protocol, io.env.REBUNO_PROTOCOL);
  const timeoutMs =
    options.timeout === undefined ? undefined : parsePositiveInt(options.timeout, "--timeout") * 1000;
  let client: Client | undefined;
  return {
    io,
    json: options.json === true,
    color: useColor(io),
    protocol,
    setExitCode,
    client() {
      if (client !== undefined) return client;
      const baseUrl = options.url ?? io.env.REBUNO_URL;
      if (baseUrl === undefined || baseUrl.trim() === "") {
        throw new UsageError("no kernel URL: pass --url or set REBUNO_URL (e.g. http://127.0.0.1:8080)");
      }
      client = new Client({
        baseUrl,
        apiKey: options.apiKey ?? io.env.REBUNO_API_KEY,
        env: io.env,
        protocol,
        timeoutMs,
        // Two tries for retryable calls: a person at a terminal would rather read "unreachable"
        // after a moment than wait out the library's longer default backoff.
        retry: { attempts: 2, baseMs: 200, maxMs: 1_000 },
        logger: { warn: () => {}, error: () => {} },
      });
      return client;
    },
  };
}
