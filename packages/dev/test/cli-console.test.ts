// `rebuno-dev` puts the kernel and the web console together: `/` serves the console unless
// `--no-console`; the kernel library itself only has the `staticAssets` option.
import { startRebunoDev } from "@rebuno/test-kit";
import { beforeAll, describe, expect, test } from "vitest";
import { buildConsole } from "../../console/scripts/build.mjs";
import { parseCliArgs } from "../src/cli-options.js";

/** Start `rebuno-dev` with `args`, fetch `/`, stop it; returns the answer and stdout. */
async function home(args: string[]): Promise<{ status: number; type: string; body: string; stdout: string }> {
  const kernel = await startRebunoDev({ args: ["--quiet", ...args] });
  try {
    const res = await fetch(`${kernel.url}/`);
    return {
      status: res.status,
      type: res.headers.get("content-type") ?? "",
      body: await res.text(),
      stdout: kernel.process.stdout(),
    };
  } finally {
    await kernel.process.kill("SIGTERM");
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
