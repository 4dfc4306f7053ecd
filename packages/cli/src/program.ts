/**
 * The `rebuno` command tree (commander) and {@link runCli}, which runs one command line and
 * returns its exit code. `main.ts` wires it to the process.
 */
import { createRequire } from "node:module";
import { Command, CommanderError, Option } from "commander";
import { registerAgentCommands } from "./commands/agents.js";
import { registerApprovalCommands } from "./commands/approvals.js";
import { type Register, registerExecCommands } from "./commands/executions.js";
import { registerPolicyCommands } from "./commands/policy.js";
import { registerRecordingCommands } from "./commands/recordings.js";
import { commandContext } from "./context.js";
import { EXIT, errorMessage, exitCodeFor } from "./exit-codes.js";
import type { CliIo } from "./output.js";

const pkg = createRequire(import.meta.url)("../package.json") as { version: string };

/** Version of `@rebuno/cli` (printed by `rebuno --version`). */
export const CLI_VERSION: string = pkg.version;

function buildProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command("rebuno")
    .description("Inspect and steer executions on any Rebuno kernel (the dev kernel or the real one).")
    .version(CLI_VERSION, "-V, --version", "print the version")
    .option("--url <url>", "kernel base URL (env REBUNO_URL)")
    .option("--api-key <token>", "bearer token or API key (env REBUNO_API_KEY)")
    .addOption(
      new Option("--protocol <generation>", "kernel protocol generation (env REBUNO_PROTOCOL)").choices([
        "v1",
        "legacy",
      ]),
    )
    .option("--timeout <seconds>", "per-request time limit")
    .option("--json", "print JSON instead of tables (JSON lines for exec watch)")
    .helpOption("-h, --help", "show help for a command")
    .showHelpAfterError("(add --help for usage)")
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .addHelpText(
      "after",
      "\nExit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 unauthorized/forbidden, 5 unreachable,\n" +
        "6 conflict, 7 invalid request, 8 not supported by the kernel; exec watch: 10 failed,\n" +
        "11 cancelled; policy test --executions: 12 decisions would change. See docs/cli.md.",
    );

  const register: Register = (command, action) => {
    // Subcommands inherit the overrides so a usage error anywhere returns instead of exiting.
    command.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
    command.action(async (...params: unknown[]) => {
      const cmd = params.at(-1) as Command;
      const args = params.slice(0, -2).filter((a): a is string => typeof a === "string");
      await action(commandContext(cmd, io, setExitCode), cmd.opts() as never, args);
    });
    return command;
  };
  registerRecordingCommands(registerExecCommands(program, register), register);
  registerApprovalCommands(program, register);
  registerAgentCommands(program, register);
  registerPolicyCommands(program, register);
  for (const group of program.commands) {
    group
      .exitOverride()
      .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
      .showHelpAfterError("(add --help for usage)");
  }
  return program;
}

/** Run one command line (without `node` and the script) and return the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version "fail" with exit code 0; everything else commander refuses is usage.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    io.stderr(`rebuno: ${errorMessage(error)}\n`);
    return exitCodeFor(error);
  }
}
