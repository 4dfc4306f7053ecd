/**
 * `rebuno-dev` command line and environment → {@link DevKernelOptions}. Kept apart from `cli.ts`
 * (which has the process side effects) so it can be tested.
 */

import type { DevKernelOptions } from "@rebuno/dev-kernel";
import { parseGoDuration } from "@rebuno/policy";
import { ConfigurationError } from "@rebuno/protocol";
import { loadProvisioning } from "./provisioning.js";

/** Parsed command line. */
export interface CliOptions {
  readonly host: string;
  readonly port: number;
  readonly kernel: DevKernelOptions;
  readonly help: boolean;
  /** `--version`: print the version and exit. */
  readonly version: boolean;
  /** `--quiet`: no per-step timeline on stdout. */
  readonly quiet: boolean;
  /** `--no-console`: do not serve the web console at `/`. */
  readonly console: boolean;
  /**
   * `--otlp-endpoint` or `OTEL_EXPORTER_OTLP_ENDPOINT`: export the kernel's spans over OTLP/HTTP
   * to this base URL (docs/observability.md §3); undefined exports nothing.
   */
  readonly otlpEndpoint: string | undefined;
  /** `--allow-anonymous`: the network is trusted, serve anonymous requests beyond loopback. */
  readonly allowAnonymous: boolean;
}

/** `--auth`: `anonymous` (dev mode: no token = full access) or `required` (every request needs one). */
export type AuthMode = "anonymous" | "required";

/**
 * Exit code of `rebuno-dev` when it refuses to serve anonymous requests beyond loopback
 * ({@link AnonymousNetworkAccessError}); 1 stays every other start-up failure, 3–7 the store's.
 */
export const ANONYMOUS_NETWORK_EXIT_CODE = 8;

/** Usage text. */
export const USAGE = `usage: rebuno-dev [--config provisioning.yaml] [--listen host:port] [--store memory|sqlite:PATH]
                  [--auth anonymous|required] [--allow-anonymous]
                  [--sqlite-synchronous normal|full] [--sqlite-quick-check on|off]
                  [--quiet] [--no-console] [--otlp-endpoint URL]

  --config   provisioning manifest (agents, api_keys, bootstrap_token); \${VAR} expanded
  --listen   address to bind (default 127.0.0.1:8080, env REBUNO_LISTEN_ADDR; ":8080" = all interfaces)
  --auth     anonymous (default): requests without a token have full access, only on loopback;
             required: every request needs REBUNO_BEARER_TOKEN or an api_keys token (env REBUNO_AUTH)
  --allow-anonymous  serve anonymous requests on a non-loopback address: the network is trusted
             (env REBUNO_ALLOW_ANONYMOUS=true); without it such a --listen is refused (exit 8)
  --store    memory (default) or sqlite:PATH
  --sqlite-synchronous  durability of the SQLite store (env REBUNO_SQLITE_SYNCHRONOUS): normal (default)
             survives a killed process; full also fsyncs every commit, to survive power loss
  --sqlite-quick-check  SQLite's quick_check of the whole file at start (env REBUNO_SQLITE_QUICK_CHECK):
             on (default) reads every page, about a second per GB; off starts in a time that does not
             grow with the file (the acknowledged-commit seal is checked either way)
  --quiet    do not print the one-line-per-step timeline of every execution
  --no-console  do not serve the web console at / (it is served by default)
  --otlp-endpoint  export the kernel's OpenTelemetry spans over OTLP/HTTP to this base URL
             (env OTEL_EXPORTER_OTLP_ENDPOINT; e.g. http://127.0.0.1:4318)
  --version  print the version and exit

environment: REBUNO_BEARER_TOKEN (the full-access token), REBUNO_DISPATCH_MAX_ATTEMPTS, REBUNO_DISPATCH_LEASE_TIMEOUT,
REBUNO_DISPATCH_TIMEOUT, REBUNO_DISPATCH_CONCURRENCY, REBUNO_APPROVAL_TIMEOUT, REBUNO_DEADLINE_TIMEOUT,
REBUNO_CLEANUP_INTERVAL, REBUNO_RETENTION, REBUNO_JUDGE_ENDPOINT`;

/** Parse `host:port` (`:8080` binds every interface; `[::1]:80` for IPv6). */
export function parseListen(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr.trim());
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port > 65535)
    throw new ConfigurationError(`invalid listen address ${JSON.stringify(addr)}`);
  const host = m[1] ?? m[2] ?? "";
  return { host: host === "" ? "0.0.0.0" : host, port };
}

/**
 * `--sqlite-synchronous` / `REBUNO_SQLITE_SYNCHRONOUS` → the SQLite store's `synchronous` level.
 * Only meaningful with `--store sqlite:PATH`: asking a memory store for fsync is refused rather
 * than ignored, since the user believes acknowledged work survives power loss.
 */
export function parseSqliteSynchronous(
  value: string | undefined,
  source: string,
  store: "memory" | "sqlite",
): "NORMAL" | "FULL" | undefined {
  if (value === undefined || value === "") return undefined;
  const level = value.toUpperCase();
  if (level !== "NORMAL" && level !== "FULL")
    throw new ConfigurationError(`${source} must be normal or full, got ${JSON.stringify(value)}`);
  if (store !== "sqlite")
    throw new ConfigurationError(
      `${source} applies only to --store sqlite:PATH (the memory store keeps nothing on disk)`,
    );
  return level;
}

/**
 * `--sqlite-quick-check` / `REBUNO_SQLITE_QUICK_CHECK` → the SQLite store's `quickCheck`. Like
 * `--sqlite-synchronous`, refused with the memory store rather than ignored.
 */
export function parseSqliteQuickCheck(
  value: string | undefined,
  source: string,
  store: "memory" | "sqlite",
): boolean | undefined {
  if (value === undefined || value === "") return undefined;
  const on = { on: true, true: true, "1": true, off: false, false: false, "0": false }[value.toLowerCase()];
  if (on === undefined)
    throw new ConfigurationError(`${source} must be on or off, got ${JSON.stringify(value)}`);
  if (store !== "sqlite")
    throw new ConfigurationError(
      `${source} applies only to --store sqlite:PATH (the memory store has no file to check)`,
    );
  return on;
}

function durationMs(env: Readonly<Record<string, string | undefined>>, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === "") return undefined;
  try {
    return parseGoDuration(v);
  } catch {
    throw new ConfigurationError(
      `${name}: invalid duration ${JSON.stringify(v)} (use Go syntax, e.g. 2m, 30s)`,
    );
  }
}

function integer(env: Readonly<Record<string, string | undefined>>, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === "") return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new ConfigurationError(`${name} must be a positive integer`);
  return Number(v);
}

/** `--auth` / `REBUNO_AUTH`. */
export function parseAuthMode(value: string | undefined, source: string): AuthMode {
  if (value === undefined || value === "") return "anonymous";
  if (value === "anonymous" || value === "required") return value;
  throw new ConfigurationError(`${source} must be anonymous or required, got ${JSON.stringify(value)}`);
}

/** `REBUNO_ALLOW_ANONYMOUS`: `true`/`1` or `false`/`0` (unset = false); anything else is refused. */
function flagFromEnv(env: Readonly<Record<string, string | undefined>>, name: string): boolean {
  const v = env[name];
  if (v === undefined || v === "" || v === "false" || v === "0") return false;
  if (v === "true" || v === "1") return true;
  throw new ConfigurationError(`${name} must be true or false, got ${JSON.stringify(v)}`);
}

/** Parse argv (without `node` and the script) and the environment. */
export function parseCliArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CliOptions {
  const flags = new Map<string, string>();
  let help = false;
  let version = false;
  let quiet = false;
  let console = true;
  let allowAnonymousFlag = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-h" || arg === "--help") {
      help = true;
      continue;
    }
    if (arg === "-V" || arg === "--version") {
      version = true;
      continue;
    }
    if (arg === "-q" || arg === "--quiet") {
      quiet = true;
      continue;
    }
    if (arg === "--no-console") {
      console = false;
      continue;
    }
    if (arg === "--allow-anonymous") {
      allowAnonymousFlag = true;
      continue;
    }
    const m =
      /^--(config|listen|store|sqlite-synchronous|sqlite-quick-check|auth|otlp-endpoint)(?:=(.*))?$/.exec(
        arg,
      );
    if (m === null) throw new ConfigurationError(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new ConfigurationError(`--${m[1]} needs a value`);
    flags.set(m[1]!, value);
  }
  const { host, port } = parseListen(flags.get("listen") ?? env.REBUNO_LISTEN_ADDR ?? "127.0.0.1:8080");
  const storeFlag = flags.get("store") ?? "memory";
  const sqlitePath = storeFlag.startsWith("sqlite:") && storeFlag.length > 7 ? storeFlag.slice(7) : undefined;
  if (storeFlag !== "memory" && sqlitePath === undefined)
    throw new ConfigurationError(`--store must be memory or sqlite:PATH, got ${JSON.stringify(storeFlag)}`);
  const syncFlag = flags.get("sqlite-synchronous");
  const synchronous = parseSqliteSynchronous(
    syncFlag ?? env.REBUNO_SQLITE_SYNCHRONOUS,
    syncFlag === undefined ? "REBUNO_SQLITE_SYNCHRONOUS" : "--sqlite-synchronous",
    sqlitePath === undefined ? "memory" : "sqlite",
  );
  const quickFlag = flags.get("sqlite-quick-check");
  const quickCheck = parseSqliteQuickCheck(
    quickFlag ?? env.REBUNO_SQLITE_QUICK_CHECK,
    quickFlag === undefined ? "REBUNO_SQLITE_QUICK_CHECK" : "--sqlite-quick-check",
    sqlitePath === undefined ? "memory" : "sqlite",
  );
  const store: DevKernelOptions["store"] =
    sqlitePath === undefined
      ? "memory"
      : {
          sqlite: sqlitePath,
          ...(synchronous === undefined ? {} : { synchronous }),
          ...(quickCheck === undefined ? {} : { quickCheck }),
        };

  const config = flags.get("config");
  const provisioning = config === undefined ? undefined : loadProvisioning(config, env);
  const authFlag = flags.get("auth");
  const auth = parseAuthMode(authFlag ?? env.REBUNO_AUTH, authFlag === undefined ? "REBUNO_AUTH" : "--auth");
  const allowAnonymous = allowAnonymousFlag || flagFromEnv(env, "REBUNO_ALLOW_ANONYMOUS");
  const bootstrapToken = env.REBUNO_BEARER_TOKEN || provisioning?.bootstrapToken;
  if (auth === "required" && allowAnonymous)
    throw new ConfigurationError(
      "--auth required and --allow-anonymous contradict each other: with auth required no request is anonymous",
    );
  if (auth === "required" && bootstrapToken === undefined && (provisioning?.apiKeys ?? []).length === 0)
    throw new ConfigurationError(
      "--auth required needs a token to accept: set REBUNO_BEARER_TOKEN, or bootstrap_token or api_keys in --config",
    );
  const leaseMs = durationMs(env, "REBUNO_DISPATCH_LEASE_TIMEOUT");
  const kernel: DevKernelOptions = {
    store,
    agents: provisioning?.agents,
    apiKeys: provisioning?.apiKeys,
    bootstrapToken,
    devMode: auth === "anonymous",
    approvalTimeoutMs: durationMs(env, "REBUNO_APPROVAL_TIMEOUT"),
    deadlineTimeoutMs: durationMs(env, "REBUNO_DEADLINE_TIMEOUT"),
    sweepIntervalMs: durationMs(env, "REBUNO_CLEANUP_INTERVAL"),
    retentionMs: durationMs(env, "REBUNO_RETENTION"),
    judgeEndpoint: env.REBUNO_JUDGE_ENDPOINT || undefined,
    dispatch: {
      maxAttempts: integer(env, "REBUNO_DISPATCH_MAX_ATTEMPTS"),
      leaseTimeoutSeconds: leaseMs === undefined ? undefined : leaseMs / 1000,
      timeoutMs: durationMs(env, "REBUNO_DISPATCH_TIMEOUT"),
      concurrency: integer(env, "REBUNO_DISPATCH_CONCURRENCY"),
    },
  };
  const otlpEndpoint = flags.get("otlp-endpoint") ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined);
  if (otlpEndpoint !== undefined && !/^https?:\/\/[^/]/.test(otlpEndpoint)) {
    throw new ConfigurationError(
      `--otlp-endpoint must be an http(s) URL such as http://127.0.0.1:4318, got ${JSON.stringify(otlpEndpoint)}`,
    );
  }
  return { host, port, kernel, help, version, quiet, console, allowAnonymous, otlpEndpoint };
}
