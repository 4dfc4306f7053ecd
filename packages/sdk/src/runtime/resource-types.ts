/** Resource driver contract (docs/protocol.md §1.10) and the runtime's record of a registration. */

/**
 * Connects a durable environment (a sandbox, a scratch database, a browser) to an execution. The
 * kernel stores the `binding` (ids, never secrets) and checkpoint refs; the driver turns them
 * back into a live handle.
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { randomUUID } from "node:crypto";
 * import { type ResourceDriver, resource } from "@rebuno/sdk";
 *
 * // Stands in for a sandbox service: environments by id, snapshots by ref.
 * class Sandbox {
 *   static readonly live = new Map<string, Sandbox>();
 *   readonly id = randomUUID();
 *   readonly log: string[] = [];
 *   static async create(checkpointRef?: string) {
 *     const s = new Sandbox();
 *     if (checkpointRef !== undefined) s.log.push(`restored ${checkpointRef}`);
 *     Sandbox.live.set(s.id, s);
 *     return s;
 *   }
 *   static async connect(id: string) {
 *     return Sandbox.live.get(id) ?? Sandbox.create();
 *   }
 *   async exec(command: string) {
 *     this.log.push(command);
 *   }
 *   async snapshot() {
 *     return `snap-${this.id}-${this.log.length}`;
 *   }
 * }
 *
 * const sandboxes: ResourceDriver<Sandbox, { id: string }> = {
 *   driverId: "sandbox/v1",
 *   async create(ref) {
 *     const s = await Sandbox.create(ref);
 *     return { handle: s, binding: { id: s.id } };
 *   },
 *   open: (binding) => Sandbox.connect(binding.id),
 *   checkpoint: (s) => s.snapshot(),
 * };
 * const box = await resource("sandbox", { driver: sandboxes });
 * ```
 */
export interface ResourceDriver<THandle = unknown, TBinding = unknown> {
  /** Stable driver id; changing it for a registered key is a kernel 409. */
  readonly driverId: string;
  /** JSON configuration (no secrets); part of the registration identity. */
  readonly configuration?: unknown;
  /** Keep coverage until an affecting step starts (default: coverage ends at the next live step). */
  readonly coverageReuse?: boolean;
  /** Make a new environment, restored from `checkpointRef` when the kernel gives one. */
  create(
    checkpointRef?: string,
  ): { handle: THandle; binding: TBinding } | Promise<{ handle: THandle; binding: TBinding }>;
  /** Reconnect to the environment a binding names. */
  open(binding: TBinding): THandle | Promise<THandle>;
  /** Snapshot the environment; returns the checkpoint ref stored by the kernel. */
  checkpoint?(handle: THandle): string | Promise<string>;
}

/**
 * When to checkpoint. Omitted means `{ everySteps: 1, onCompletion: true }` (the documented
 * default, G18), which needs `driver.checkpoint()`; pass `false` to disable checkpointing.
 */
export interface CheckpointPolicy {
  /** Capture after every N affecting steps (positive integer, default 1). */
  readonly everySteps?: number;
  /** Capture when the handler completes, unless already covered (default true). */
  readonly onCompletion?: boolean;
}

/** A resource registered in the current dispatch. */
export interface RegisteredResource {
  readonly key: string;
  readonly handle: unknown;
  readonly driver: ResourceDriver;
  readonly everySteps: number;
  readonly onCompletion: boolean;
  readonly registration: {
    readonly key: string;
    readonly driverId: string;
    readonly configuration: unknown;
    readonly coverageReuse: boolean;
    readonly everySteps: number;
    readonly onCompletion: boolean;
  };
}
