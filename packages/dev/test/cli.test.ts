// The `rebuno-dev` CLI and the provisioning manifest (docs/protocol.md §13.1).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDevKernel } from "@rebuno/dev-kernel";
import { startRebunoDev, TempDirs } from "@rebuno/test-kit";
import { afterEach, describe, expect, test } from "vitest";
import { parseCliArgs, parseListen } from "../src/cli-options.js";
import { expandEnv, parseProvisioning } from "../src/provisioning.js";

const dirs = new TempDirs("rebuno-cli");
afterEach(() => dirs.removeAll());
const tempDir = () => dirs.make();

describe("provisioning", () => {
  test("braced and bare variables expand from the environment; unset variables stay literal", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the manifest's ${VAR} syntax is under test
    expect(expandEnv("a ${X} $Y $NOPE ${NOPE2}", { X: "1", Y: "2" })).toBe("a 1 2 $NOPE ${NOPE2}");
  });

  test("agents, policy_file relative to the manifest, api keys, bootstrap token", () => {
    const files: Record<string, string> = { "/etc/rebuno/policies/shell.yaml": "default_action: deny\n" };
    const p = parseProvisioning(
      `bootstrap_token: \${ROOT}
agents:
  - id: shell
    webhook_url: http://localhost:5002/webhook
    secret: \${SHELL_SECRET}
    lease_timeout_seconds: 600
    policy_file: policies/shell.yaml
  - id: hello
    webhook_url: http://localhost:5000/webhook
    secret: $HELLO_SECRET
    policy: |
      default_action: allow
api_keys:
  - { name: ci, token: ci-token, scopes: [executions:read] }
`,
      "/etc/rebuno",
      { ROOT: "root", SHELL_SECRET: "s3cret" },
      (path) => {
        const f = files[path];
        if (f === undefined) throw new Error(`ENOENT ${path}`);
        return f;
      },
    );
    expect(p.bootstrapToken).toBe("root");
    expect(p.agents).toEqual([
      {
        id: "shell",
        webhookUrl: "http://localhost:5002/webhook",
        secret: "s3cret",
        leaseTimeoutSeconds: 600,
        policy: "default_action: deny\n",
      },
      {
        id: "hello",
        webhookUrl: "http://localhost:5000/webhook",
        secret: "$HELLO_SECRET",
        leaseTimeoutSeconds: undefined,
        policy: "default_action: allow\n",
      },
    ]);
    expect(p.apiKeys).toEqual([{ name: "ci", token: "ci-token", scopes: ["executions:read"] }]);
  });

  test("policy with policy_file, unknown keys and missing ids are errors", () => {
    const bad = [
      "agents:\n  - { id: a, webhook_url: u, secret: s, policy: x, policy_file: y }\n",
      "agents:\n  - { id: a, webhook_url: u, secret: s, colour: red }\n",
      "agents:\n  - { webhook_url: u, secret: s }\n",
      "extra: 1\n",
    ];
    for (const text of bad) expect(() => parseProvisioning(text, "/", {}), text).toThrow();
  });

  test("a bad bundle fails the start", async () => {
    await expect(
      startDevKernel({ agents: [{ id: "a", webhookUrl: "http://x/w", secret: "s", policy: "rules: nope" }] }),
    ).rejects.toThrow(/invalid policy bundle/);
  });
});

describe("command line", () => {
  test("--listen, --store, env knobs", () => {
    const o = parseCliArgs(["--listen", "127.0.0.1:9000", "--store=sqlite:/tmp/k.db"], {
      REBUNO_DISPATCH_MAX_ATTEMPTS: "7",
      REBUNO_DISPATCH_LEASE_TIMEOUT: "90s",
      REBUNO_APPROVAL_TIMEOUT: "1h",
      REBUNO_BEARER_TOKEN: "root",
    });
    expect(o.host).toBe("127.0.0.1");
    expect(o.port).toBe(9000);
    expect(o.kernel.store).toEqual({ sqlite: "/tmp/k.db" });
    expect(o.kernel.dispatch).toMatchObject({ maxAttempts: 7, leaseTimeoutSeconds: 90 });
    expect(o.kernel.approvalTimeoutMs).toBe(3_600_000);
    expect(o.kernel.bootstrapToken).toBe("root");
    expect(parseCliArgs([], { REBUNO_LISTEN_ADDR: ":8081" })).toMatchObject({ host: "0.0.0.0", port: 8081 });
    expect(parseListen("[::1]:80")).toEqual({ host: "::1", port: 80 });
    expect(() => parseCliArgs(["--store", "redis"], {})).toThrow(/--store/);
    expect(() => parseCliArgs(["--bogus"], {})).toThrow(/unknown argument/);
    expect(() => parseCliArgs([], { REBUNO_APPROVAL_TIMEOUT: "15 minutes" })).toThrow(
      /REBUNO_APPROVAL_TIMEOUT/,
    );
  });

  test("the process prints its URL, serves, and exits cleanly on SIGTERM", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "policy.yaml"), "default_action: allow\n");
    writeFileSync(
      join(dir, "dev.yaml"),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the manifest's ${VAR} syntax is under test
      "agents:\n  - id: hello\n    webhook_url: http://127.0.0.1:1/webhook\n    secret: ${HELLO_SECRET}\n    policy_file: policy.yaml\n",
    );
    const kernel = await startRebunoDev({
      config: join(dir, "dev.yaml"),
      env: { HELLO_SECRET: "hs" },
      timeoutMs: 15_000,
    });
    const agent = await fetch(`${kernel.url}/v0/agents/hello`);
    expect(agent.status).toBe(200);
    expect(((await agent.json()) as { policy_bundle: string }).policy_bundle).toBe("default_action: allow\n");
    const exit = await kernel.process.kill("SIGTERM");
    expect(exit.code).toBe(0);
    expect(kernel.process.stdout()).toContain("shutting down");
  }, 20_000);
});
