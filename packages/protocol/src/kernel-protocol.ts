/**
 * Which generation of the kernel's wire protocol a component speaks. Chosen by configuration (an
 * option, or the `REBUNO_PROTOCOL` environment variable), never guessed from what a request carries:
 * a component set for `v1` refuses an unfenced legacy webhook instead of silently losing fencing.
 *
 * - `v1`: the newest documented protocol (the default): `v1=` request signatures with a timestamp,
 *   webhooks with `dispatch_attempt` and `lease_timeout_seconds`, subagents, sessions, resources,
 *   API keys, forks and metadata routes.
 * - `legacy`: the older generation of the Go kernel snapshot (`rebuno dev` / `rebuno server` at
 *   commit 5daac51): `sha256=<HMAC(body)>` request signatures with `Rebuno-Agent-Id` and
 *   `Rebuno-Dispatch-Id` and no timestamp, webhooks of `{execution_id, dispatch_id}` only (no attempt
 *   fencing), Go-style admin keys, and none of the newer routes.
 */
import { ConfigurationError, RebunoError, type RebunoErrorOptions } from "./errors.js";

/** A kernel protocol generation (see the module comment). */
export type KernelProtocol = "v1" | "legacy";

/** Every supported generation, the default first. */
export const KERNEL_PROTOCOLS: readonly KernelProtocol[] = ["v1", "legacy"];

/** The default generation: the newest documented protocol. */
export const DEFAULT_KERNEL_PROTOCOL: KernelProtocol = "v1";

/** Environment variable read by the SDK, transport, client and CLI when no option is given. */
export const KERNEL_PROTOCOL_ENV = "REBUNO_PROTOCOL";

/**
 * Resolve the generation from an explicit option, else from the environment value, else the default.
 * `source` names where a bad value came from, for the error message.
 */
export function resolveKernelProtocol(
  option: string | undefined,
  envValue: string | undefined,
): KernelProtocol {
  if (option !== undefined) return checkKernelProtocol(option, "the `protocol` option");
  if (envValue !== undefined && envValue !== "") return checkKernelProtocol(envValue, KERNEL_PROTOCOL_ENV);
  return DEFAULT_KERNEL_PROTOCOL;
}

function checkKernelProtocol(value: string, source: string): KernelProtocol {
  if ((KERNEL_PROTOCOLS as readonly string[]).includes(value)) return value as KernelProtocol;
  throw new ConfigurationError(
    `${source} is ${JSON.stringify(value)}; expected one of ${KERNEL_PROTOCOLS.map((p) => `"${p}"`).join(", ")}`,
    { details: { setting: source, value } },
  );
}

/** Options of {@link NotSupportedByKernel}. */
export interface NotSupportedByKernelOptions extends Omit<RebunoErrorOptions, "code"> {
  /** The SDK feature that needs the missing route or field, e.g. `"subagents"`, `"sessions"`. */
  readonly feature: string;
  /** The generation the component is configured for. */
  readonly protocol: KernelProtocol;
}

/**
 * A feature the configured kernel generation does not have (for example subagents against the
 * `legacy` Go kernel). Raised before any request is sent, or when the kernel answers a route with
 * 404/405, instead of a bare 404 or a hang.
 */
export class NotSupportedByKernel extends RebunoError {
  static {
    NotSupportedByKernel.prototype.name = "NotSupportedByKernel";
  }
  /** The feature that is not available. */
  readonly feature: string;
  /** The configured generation. */
  readonly protocol: KernelProtocol;
  constructor(message: string, options: NotSupportedByKernelOptions) {
    const { feature, protocol, ...rest } = options;
    super(message, { ...rest, code: "not_supported_by_kernel" });
    this.feature = feature;
    this.protocol = protocol;
  }
}
