/**
 * The provisioning manifest of `rebuno dev --config` (docs/protocol.md §13.1), plus two dev-kernel
 * additions: `api_keys` (fixed tokens with scopes) and `bootstrap_token`.
 *
 * ```yaml
 * bootstrap_token: ${ROOT_TOKEN}
 * agents:
 *   - id: shell
 *     webhook_url: http://localhost:5002/webhook
 *     secret: ${SHELL_SECRET}
 *     lease_timeout_seconds: 600
 *     policy_file: policies/shell.yaml   # relative to this file; or `policy: |` inline, not both
 * api_keys:
 *   - { name: ci, token: $CI_TOKEN, scopes: [executions:read, executions:write] }
 * ```
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { AgentProvision, ApiKeyProvision } from "@rebuno/dev-kernel";
import { ConfigurationError } from "@rebuno/protocol";
import { parse } from "yaml";

/** What a manifest provides. */
export interface Provisioning {
  readonly agents: AgentProvision[];
  readonly apiKeys: ApiKeyProvision[];
  readonly bootstrapToken: string | undefined;
}

/**
 * Expand `${VAR}` and `$VAR` from `env` over the whole text (before YAML parsing). An unset
 * variable is left as the literal text, like the production kernel.
 */
export function expandEnv(text: string, env: Readonly<Record<string, string | undefined>>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced, bare) => {
    const value = env[(braced ?? bare) as string];
    return value === undefined ? whole : value;
  });
}

const TOP_KEYS = new Set(["agents", "api_keys", "bootstrap_token"]);
const AGENT_KEYS = new Set(["id", "webhook_url", "secret", "lease_timeout_seconds", "policy_file", "policy"]);
const KEY_KEYS = new Set(["name", "token", "scopes"]);

function record(value: unknown, where: string, allowed: ReadonlySet<string>): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigurationError(`${where} must be a mapping`);
  }
  for (const k of Object.keys(value)) {
    if (!allowed.has(k)) throw new ConfigurationError(`${where}: unknown key ${JSON.stringify(k)}`);
  }
  return value as Record<string, unknown>;
}

function text(value: unknown, where: string, required: boolean): string | undefined {
  if (value === undefined || value === null) {
    if (required) throw new ConfigurationError(`${where} is required`);
    return undefined;
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value !== "string") throw new ConfigurationError(`${where} must be a string`);
  if (required && value === "") throw new ConfigurationError(`${where} is required`);
  return value;
}

function list(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigurationError(`${where} must be a list`);
  return value;
}

/**
 * Parse manifest text. `baseDir` resolves `policy_file` paths; `readFile` is injectable for tests.
 * Bundles are read here and compiled later, at registration (a bad bundle fails the start).
 */
export function parseProvisioning(
  source: string,
  baseDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): Provisioning {
  let doc: unknown;
  try {
    doc = parse(expandEnv(source, env));
  } catch (err) {
    throw new ConfigurationError(`invalid provisioning YAML: ${(err as Error).message}`, { cause: err });
  }
  const top = record(doc ?? {}, "provisioning", TOP_KEYS);
  const agents = list(top.agents, "agents").map((raw, i): AgentProvision => {
    const where = `agents[${i}]`;
    const a = record(raw, where, AGENT_KEYS);
    const inline = text(a.policy, `${where}.policy`, false);
    const file = text(a.policy_file, `${where}.policy_file`, false);
    if (inline !== undefined && file !== undefined) {
      throw new ConfigurationError(`${where}: policy and policy_file are mutually exclusive`);
    }
    let policy = inline;
    if (file !== undefined) {
      try {
        policy = readFile(resolve(baseDir, file));
      } catch (err) {
        throw new ConfigurationError(`${where}.policy_file: ${(err as Error).message}`, { cause: err });
      }
    }
    const lease = a.lease_timeout_seconds;
    if (lease !== undefined && lease !== null && (typeof lease !== "number" || !Number.isFinite(lease))) {
      throw new ConfigurationError(`${where}.lease_timeout_seconds must be a number`);
    }
    return {
      id: text(a.id, `${where}.id`, true)!,
      webhookUrl: text(a.webhook_url, `${where}.webhook_url`, true)!,
      secret: text(a.secret, `${where}.secret`, true)!,
      leaseTimeoutSeconds: typeof lease === "number" ? lease : undefined,
      policy,
    };
  });
  const apiKeys = list(top.api_keys, "api_keys").map((raw, i): ApiKeyProvision => {
    const where = `api_keys[${i}]`;
    const k = record(raw, where, KEY_KEYS);
    const scopes = list(k.scopes, `${where}.scopes`).map((s, j) => text(s, `${where}.scopes[${j}]`, true)!);
    return {
      name: text(k.name, `${where}.name`, true)!,
      token: text(k.token, `${where}.token`, true)!,
      scopes,
    };
  });
  return {
    agents,
    apiKeys,
    bootstrapToken: text(top.bootstrap_token, "bootstrap_token", false) || undefined,
  };
}

/** Read and parse a manifest file; `policy_file` paths are relative to it. */
export function loadProvisioning(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Provisioning {
  let source: string;
  try {
    source = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigurationError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseProvisioning(source, dirname(resolve(path)), env);
}
