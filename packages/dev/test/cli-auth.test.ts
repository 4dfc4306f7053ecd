// `rebuno-dev` beyond loopback: refused without auth settings (exit 8, with the two ways out),
// started with a warning on --allow-anonymous, and protected by --auth required.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError } from "@rebuno/protocol";
import { ChildProcessFailed, ProcessGroup, spawnRebunoDev } from "@rebuno/test-kit";
import { afterEach, describe, expect, test } from "vitest";
import { ANONYMOUS_NETWORK_EXIT_CODE, parseCliArgs } from "../src/cli-options.js";

const TOKEN = "cli-root-token-41c2";

const running = new ProcessGroup();
const dirs: string[] = [];
afterEach(async () => {
  await running.killAll();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Outcome =
  | { readonly kind: "listening"; readonly url: string; readonly stop: () => Promise<string> }
  | {
      readonly kind: "exited";
      readonly code: number | null;
      readonly stdout: string;
      readonly stderr: string;
    };

/** Start `rebuno-dev`; resolves once it printed its URL or exited, whichever comes first. */
function start(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const p = spawnRebunoDev(["--quiet", "--no-console", ...args], {
    env: { REBUNO_LISTEN_ADDR: "", REBUNO_AUTH: "", REBUNO_ALLOW_ANONYMOUS: "", ...env },
    group: running,
  });
  // SIGTERM, then everything it wrote to stderr (complete once it exited).
  const stop = async (): Promise<string> => {
    expect((await p.kill("SIGTERM")).code).toBe(0);
    return p.stderr();
  };
  return p.waitForOutput(/rebuno-dev listening on (http:\/\/\S+)/).then(
    (m): Outcome => ({ kind: "listening", url: m[1]!, stop }),
    async (error: unknown): Promise<Outcome> => {
      // Exited before listening is an outcome under test; not starting in time is a failure.
      if (!ChildProcessFailed.isInstance(error) || error.exit === undefined) throw error;
      return { kind: "exited", code: error.exit.code, stdout: p.stdout(), stderr: p.stderr() };
    },
  );
}

/** The loopback URL of a kernel bound to every interface. */
function viaLoopback(url: string): string {
  return `http://127.0.0.1:${new URL(url).port}`;
}

describe("rebuno-dev on a non-loopback address", () => {
  test("--listen :PORT without auth settings exits 8 and says why and the two ways out", async () => {
    const r = await start(["--listen", ":0"]);
    expect(r.kind).toBe("exited");
    if (r.kind !== "exited") return;
    expect(r.code).toBe(ANONYMOUS_NETWORK_EXIT_CODE);
    expect(r.stdout).not.toContain("listening on");
    expect(r.stderr).toContain("refusing to listen on 0.0.0.0:");
    expect(r.stderr).toContain("not a loopback address");
    expect(r.stderr).toContain("--auth required");
    expect(r.stderr).toContain("REBUNO_BEARER_TOKEN");
    expect(r.stderr).toContain("--allow-anonymous");
  }, 20_000);

  test("the same from the environment (REBUNO_LISTEN_ADDR), and for [::]", async () => {
    const env = await start([], { REBUNO_LISTEN_ADDR: ":0" });
    expect(env).toMatchObject({ kind: "exited", code: ANONYMOUS_NETWORK_EXIT_CODE });
    const v6 = await start(["--listen", "[::]:0"]);
    expect(v6).toMatchObject({ kind: "exited", code: ANONYMOUS_NETWORK_EXIT_CODE });
    if (v6.kind === "exited") expect(v6.stderr).toContain("refusing to listen on [::]:");
  }, 20_000);

  test("--allow-anonymous starts, warns naming the address, and serves anonymous requests", async () => {
    for (const [args, env] of [
      [["--listen", ":0", "--allow-anonymous"], {}],
      [["--listen", ":0"], { REBUNO_ALLOW_ANONYMOUS: "true" }],
    ] as const) {
      const r = await start([...args], env);
      expect(r.kind, JSON.stringify(r.kind === "exited" ? r.stderr : "")).toBe("listening");
      if (r.kind !== "listening") return;
      const port = new URL(r.url).port;
      expect((await fetch(`${viaLoopback(r.url)}/v0/executions`)).status).toBe(200);
      expect(await r.stop()).toContain(`WARNING: anonymous requests have full access and 0.0.0.0:${port}`);
    }
  }, 30_000);

  test("loopback (the default) starts without a warning", async () => {
    const r = await start(["--listen", "127.0.0.1:0"]);
    expect(r.kind).toBe("listening");
    if (r.kind !== "listening") return;
    expect((await fetch(`${r.url}/v0/executions`)).status).toBe(200);
    expect(await r.stop()).not.toContain("WARNING");
  }, 20_000);

  test("--auth required: anonymous reads and writes get 401, the bootstrap token is accepted, no warning", async () => {
    const r = await start(["--listen", ":0", "--auth", "required"], { REBUNO_BEARER_TOKEN: TOKEN });
    expect(r.kind).toBe("listening");
    if (r.kind !== "listening") return;
    const base = viaLoopback(r.url);
    expect((await fetch(`${base}/v0/executions`)).status).toBe(401);
    const write = await fetch(`${base}/v0/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "a", webhook_url: "http://127.0.0.1:1/w", secret: "s" }),
    });
    expect(write.status).toBe(401);
    const wrong = await fetch(`${base}/v0/executions`, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    const ok = await fetch(`${base}/v0/executions`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await r.stop()).not.toContain("WARNING");
  }, 20_000);

  test("REBUNO_AUTH=required with only api_keys from --config: the key works within its scopes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rebuno-cli-auth-"));
    dirs.push(dir);
    writeFileSync(
      join(dir, "dev.yaml"),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the manifest's ${VAR} syntax is under test
      "api_keys:\n  - { name: watcher, token: ${WATCH_TOKEN}, scopes: [executions:read] }\n",
    );
    const r = await start(["--listen", ":0", "--config", join(dir, "dev.yaml")], {
      REBUNO_AUTH: "required",
      WATCH_TOKEN: "watch-token-9",
    });
    expect(r.kind).toBe("listening");
    if (r.kind !== "listening") return;
    const base = viaLoopback(r.url);
    const auth = { authorization: "Bearer watch-token-9" };
    expect((await fetch(`${base}/v0/executions`)).status).toBe(401);
    expect((await fetch(`${base}/v0/executions`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${base}/v0/agents`, { headers: auth })).status).toBe(403);
  }, 20_000);

  test("--auth required without any token exits 1 and names what to set", async () => {
    const r = await start(["--listen", ":0", "--auth", "required"], { REBUNO_BEARER_TOKEN: "" });
    expect(r).toMatchObject({ kind: "exited", code: 1 });
    if (r.kind === "exited") expect(r.stderr).toContain("set REBUNO_BEARER_TOKEN");
  }, 20_000);
});

describe("auth options", () => {
  test("--auth and REBUNO_AUTH select dev mode; the flag wins", () => {
    expect(parseCliArgs([], {}).kernel.devMode).toBe(true);
    expect(parseCliArgs(["--auth", "anonymous"], {}).kernel.devMode).toBe(true);
    expect(parseCliArgs(["--auth=required"], { REBUNO_BEARER_TOKEN: "t" }).kernel.devMode).toBe(false);
    expect(parseCliArgs([], { REBUNO_AUTH: "required", REBUNO_BEARER_TOKEN: "t" }).kernel.devMode).toBe(
      false,
    );
    expect(parseCliArgs(["--auth", "anonymous"], { REBUNO_AUTH: "required" }).kernel.devMode).toBe(true);
    expect(parseCliArgs([], {}).allowAnonymous).toBe(false);
    expect(parseCliArgs(["--allow-anonymous"], {}).allowAnonymous).toBe(true);
    expect(parseCliArgs([], { REBUNO_ALLOW_ANONYMOUS: "1" }).allowAnonymous).toBe(true);
    expect(parseCliArgs([], { REBUNO_ALLOW_ANONYMOUS: "false" }).allowAnonymous).toBe(false);
  });

  test.each([
    [["--auth", "none"], {}, /--auth must be anonymous or required, got "none"/],
    [[], { REBUNO_AUTH: "off" }, /REBUNO_AUTH must be anonymous or required/],
    [["--auth"], {}, /--auth needs a value/],
    [["--auth", "required"], {}, /needs a token to accept: set REBUNO_BEARER_TOKEN/],
    [["--auth", "required", "--allow-anonymous"], { REBUNO_BEARER_TOKEN: "t" }, /contradict/],
    [[], { REBUNO_AUTH: "required", REBUNO_BEARER_TOKEN: "t", REBUNO_ALLOW_ANONYMOUS: "true" }, /contradict/],
    [[], { REBUNO_ALLOW_ANONYMOUS: "yes" }, /REBUNO_ALLOW_ANONYMOUS must be true or false, got "yes"/],
  ] as const)("%j %j is refused", (argv, env, message) => {
    let thrown: unknown;
    try {
      parseCliArgs([...argv], env);
    } catch (err) {
      thrown = err;
    }
    expect(ConfigurationError.isInstance(thrown), String(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(message);
  });
});
