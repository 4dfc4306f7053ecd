/**
 * `resource()`: attach a durable environment (sandbox, scratch DB, browser) to the execution so
 * forks and session turns can restore it from checkpoints (docs/protocol.md §1.10).
 */
import { ConfigurationError } from "@rebuno/protocol";
import type { CallState } from "./call-state.js";
import { LockHandle } from "./call-state.js";
import { captureOne } from "./captures.js";
import { type ExecutionContext, frames, kState, OUTSIDE_HINT } from "./context.js";
import { isControlFlow } from "./control-flow.js";
import type { CaptureSet } from "./kernel-port.js";
import type { CheckpointPolicy, RegisteredResource, ResourceDriver } from "./resource-types.js";
import { errorMessage } from "./tool-failure.js";

const RESOURCE_KEY = /^[A-Za-z0-9_.-]{1,128}$/;

/** Options of {@link resource}. */
export interface ResourceOptions<THandle, TBinding> {
  readonly driver: ResourceDriver<THandle, TBinding>;
  /**
   * Checkpoint policy. Omitted = `{ everySteps: 1, onCompletion: true }` (what the docs always
   * promised; needs `driver.checkpoint()`); `false` disables checkpointing.
   */
  readonly checkpoints?: CheckpointPolicy | false;
}

function resolvePolicy(
  checkpoints: CheckpointPolicy | false | undefined,
  driver: ResourceDriver<unknown, unknown>,
): { everySteps: number; onCompletion: boolean } {
  if (checkpoints === false) return { everySteps: 0, onCompletion: false };
  const everySteps = checkpoints?.everySteps ?? 1;
  if (!Number.isInteger(everySteps) || everySteps <= 0) {
    throw new RangeError("everySteps must be a positive integer");
  }
  if (driver.checkpoint === undefined) {
    throw new ConfigurationError(
      "checkpoint policy requires driver.checkpoint() (pass checkpoints: false to register without checkpoints)",
    );
  }
  return { everySteps, onCompletion: checkpoints?.onCompletion ?? true };
}

async function publish(ctx: ExecutionContext, state: CallState, set: CaptureSet): Promise<void> {
  await state.port.publishCheckpoints(ctx.id, ctx.lease, set);
}

/**
 * Registers (or reopens) the resource `key` for this execution and returns its live handle. The
 * same key within one dispatch returns the cached handle. While any resource is registered,
 * tool calls and steps run one at a time so checkpoints line up with step outcomes.
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
 *   create: async (ref) => {
 *     const s = await Sandbox.create(ref);
 *     return { handle: s, binding: { id: s.id } };
 *   },
 *   open: (binding) => Sandbox.connect(binding.id),
 *   checkpoint: (s) => s.snapshot(),
 * };
 * const box = await resource("sandbox", { driver: sandboxes });
 * await box.exec("npm test");
 * ```
 */
export async function resource<THandle, TBinding = unknown>(
  key: string,
  options: ResourceOptions<THandle, TBinding>,
): Promise<THandle> {
  const frame = frames.getStore();
  if (frame === undefined)
    throw new Error(`resource('${key}') called outside an active execution. ${OUTSIDE_HINT}`);
  if (typeof key !== "string" || !RESOURCE_KEY.test(key)) {
    throw new ConfigurationError(
      `resource key ${JSON.stringify(key)} is invalid (expected [A-Za-z0-9_.-]{1,128})`,
    );
  }
  const driver = options.driver as ResourceDriver<unknown, unknown>;
  const policy = resolvePolicy(options.checkpoints, driver);
  const ctx = frame.ctx;
  const state = ctx[kState];
  const lock = frame.holdsLock ? undefined : new LockHandle(state);
  await lock?.take();
  try {
    const cached = state.resources.get(key);
    if (cached !== undefined) return cached.handle as THandle;
    const registration = {
      key,
      driverId: driver.driverId,
      configuration: driver.configuration ?? null,
      coverageReuse: driver.coverageReuse === true,
      everySteps: policy.everySteps,
      onCompletion: policy.onCompletion,
    };
    const view = await state.port.registerResource(ctx.id, ctx.lease, registration);
    let handle: unknown;
    if (view.binding !== undefined && view.binding !== null) {
      handle = await driver.open(view.binding);
    } else {
      const created = await driver.create(view.checkpointRef ?? undefined);
      handle = created.handle;
      await state.port.bindResource(ctx.id, ctx.lease, key, created.binding);
    }
    const registered: RegisteredResource = { key, handle, driver, ...policy, registration };
    state.resources.set(key, registered);
    if (policy.everySteps > 0 && view.covered !== true) {
      // Baseline: the environment as it is before any step of this dispatch changes it.
      const out = await captureOne(state, registered, view.generation);
      await publish(ctx, state, {
        ...(out.capture ? { captures: [out.capture] } : {}),
        ...(out.failure ? { captureFailures: [out.failure] } : {}),
      });
    }
    return handle as THandle;
  } finally {
    lock?.release();
  }
}

/**
 * F48: after a handler returned normally, capture every resource whose policy asks for it and
 * that the kernel does not consider covered. Failures are logged, never fail the execution.
 */
export async function checkpointOnCompletion(ctx: ExecutionContext): Promise<void> {
  const state = ctx[kState];
  for (const registered of state.resources.values()) {
    if (!registered.onCompletion) continue;
    try {
      const view = await state.port.registerResource(ctx.id, ctx.lease, registered.registration);
      if (view.covered === true) continue;
      const out = await captureOne(state, registered, view.generation);
      await publish(ctx, state, {
        ...(out.capture ? { captures: [out.capture] } : {}),
        ...(out.failure ? { captureFailures: [out.failure] } : {}),
      });
    } catch (error) {
      if (isControlFlow(error)) throw error;
      state.logger.warn("checkpoint on completion failed", {
        key: registered.key,
        error: errorMessage(error),
      });
    }
  }
}
