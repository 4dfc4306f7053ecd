// `rebuno-dev` puts the kernel and the web console together: `/` serves the console unless
// `--no-console`; the kernel library itself only has the `staticAssets` option.
import { spawn } from "node:child_process";
import { beforeAll, describe, expect, test } from "vitest";
import { buildConsole } from "../../console/scripts/build.mjs";
import { parseCliArgs } from "../src/cli-options.js";
import { REBUNO_DEV_CLI as CLI, FROM_SOURCE_ENV } from "./source.js";

/** Start `rebuno-dev` with `args`, fetch `/`, stop it; returns the answer and stdout. */
async function home(args: string[]): Promise<{ status: number; type: string; body: string; stdout: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "--listen", "127.0.0.1:0", "--quiet", ...args],
    {
      env: { ...process.env, ...FROM_SOURCE_ENV },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        const m = /rebuno-dev listening on (http:\/\/\S+)/.exec(stdout);
        if (m !== null) resolve(m[1]!);
      });
      void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const res = await fetch(`${url}/`);
    return {
      status: res.status,
      type: res.headers.get("content-type") ?? "",
      body: await res.text(),
      stdout,
    };
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

describe("rebuno-dev and the web console", () => {
  beforeAll(async () => {
    await buildConsole({ fromSource: true });
  }, 60_000);

  test("--no-console is parsed; the console is on by default", () => {
    expect(parseCliArgs([], {}).console).toBe(true);
    expect(parseCliArgs(["--no-console"], {}).console).toBe(false);
  });

  test("serves the console at / and prints its URL", async () => {
    const r = await home([]);
    expect(r.status).toBe(200);
    expect(r.type).toContain("text/html");
    expect(r.body).toContain("console.js");
    expect(r.stdout).toMatch(/rebuno-dev console at http:\/\/127\.0\.0\.1:\d+\//);
  }, 30_000);

  test("--no-console leaves / to the API (404)", async () => {
    const r = await home(["--no-console"]);
    expect(r.status).toBe(404);
    expect(r.stdout).not.toContain("console at");
  }, 30_000);
});
