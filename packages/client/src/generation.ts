/**
 * What the client does differently per kernel generation (`protocol` option / `REBUNO_PROTOCOL`):
 * the `legacy` Go kernel snapshot has no session, subagent, fork, policy-test or API-key routes,
 * refuses the newer create fields, and writes agents with Go field names (`ID`, `WebhookURL`, …).
 */
import {
  ConfigurationError,
  KERNEL_PROTOCOL_ENV,
  type KernelProtocol,
  NotSupportedByKernel,
  RebunoError,
} from "@rebuno/protocol";

/** A feature the `legacy` generation lacks: throws before anything is sent. */
export function notSupported(protocol: KernelProtocol, feature: string, call: string): NotSupportedByKernel {
  return new NotSupportedByKernel(
    `${call}: ${feature} are not supported by this kernel (protocol "${protocol}", set by the ` +
      `\`protocol\` option or ${KERNEL_PROTOCOL_ENV})`,
    { feature, protocol },
  );
}

/**
 * A 404/405 that comes from a missing route rather than a missing resource: the Go router's
 * plain-text `404 page not found` / empty 405, or our kernels' "no route" envelope.
 */
export function isMissingRoute(err: unknown): boolean {
  if (!(err instanceof RebunoError)) return false;
  const status = (err as { status?: unknown }).status;
  if (status === 405) return true;
  return status === 404 && /page not found|no route/i.test(err.message);
}

// Go's encoding/json default names for the snapshot's `domain.Agent` (no json tags).
const GO_AGENT_KEYS: Readonly<Record<string, string>> = {
  ID: "id",
  WebhookURL: "webhook_url",
  PolicyBundle: "policy_bundle",
  RegisteredAt: "registered_at",
};

/**
 * The snapshot's agent object in the documented snake_case shape. The secret it echoes on
 * register is dropped (the client never hands secrets back); an empty bundle means "none".
 */
export function agentFromGo(body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const src = body as Record<string, unknown>;
  if (!("ID" in src)) return body;
  const out: Record<string, unknown> = {};
  for (const [goKey, key] of Object.entries(GO_AGENT_KEYS)) {
    const v = src[goKey];
    if (v !== undefined && v !== null && v !== "") out[key] = v;
  }
  return out;
}

/** A v1 client that received a Go-style agent: the setting is wrong, say which one. */
export function wrongGenerationForAgent(body: unknown): ConfigurationError | undefined {
  if (typeof body !== "object" || body === null || !("ID" in body) || !("WebhookURL" in body))
    return undefined;
  return new ConfigurationError(
    `the kernel answered with a Go-style agent (ID, WebhookURL): it speaks the legacy protocol; ` +
      `set \`protocol: "legacy"\` or ${KERNEL_PROTOCOL_ENV}=legacy`,
    { details: { setting: KERNEL_PROTOCOL_ENV, value: "v1" } },
  );
}
