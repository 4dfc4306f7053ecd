/** The `rebuno` process: runs the command line against the process's streams and environment. */
import { text } from "node:stream/consumers";
import { runCli } from "./program.js";

const code = await runCli(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  readStdin: () => text(process.stdin),
  env: process.env,
  isTTY: process.stdout.isTTY === true,
});
process.exitCode = code;
