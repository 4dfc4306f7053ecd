import { type CompiledPolicy, compilePolicyBundle } from "@rebuno/policy";
import type { AgentRow, ExecutionRow } from "../store/types.js";

/** The bundle that governs an execution, or why none could be compiled. */
export type GoverningPolicy =
  | { readonly kind: "none" }
  | { readonly kind: "compiled"; readonly policy: CompiledPolicy }
  | { readonly kind: "invalid" };

/**
 * Compiled bundles cached by their YAML text (docs/protocol.md §9.1), so a step never recompiles a
 * bundle.
 */
export class PolicyCache {
  private readonly cache = new Map<string, CompiledPolicy>();

  constructor(private readonly judgeEndpoint: string | undefined) {}

  /** Compile (or fetch from cache); throws `ValidationError("invalid policy bundle: …")`. */
  compile(yaml: string): CompiledPolicy {
    let policy = this.cache.get(yaml);
    if (policy === undefined) {
      policy = compilePolicyBundle(yaml, { judgeEndpoint: this.judgeEndpoint });
      this.cache.set(yaml, policy);
    }
    return policy;
  }

  /** The execution-specific bundle if any, else the agent's; none → unrestricted. */
  forExecution(execution: ExecutionRow, agent: AgentRow | undefined): GoverningPolicy {
    const yaml = execution.policyBundle ?? agent?.policyBundle;
    if (yaml === undefined) return { kind: "none" };
    try {
      return { kind: "compiled", policy: this.compile(yaml) };
    } catch {
      // Bundles are compiled before they are stored, so this only happens if the judge setting
      // changed between runs of a persistent store; the kernel denies (rule `bundle-error`).
      return { kind: "invalid" };
    }
  }
}
