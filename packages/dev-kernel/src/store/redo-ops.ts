/**
 * Redo operations: one mutating {@link Store} call, recorded as `[method, ...args]` and stored as
 * JSON in the SQLite store's log and snapshot. Replaying the ops of a file, in order, against a
 * fresh {@link MemoryStore} rebuilds the state the writer had, because the memory store's methods
 * are deterministic: they read no clock and no randomness, and the values they assign (event seqs,
 * checkpoint seqs) depend only on the state before the call.
 *
 * Rows are recorded as the objects the caller passed (rows are immutable values, store contract),
 * so recording costs a small array; they are serialized once, when their batch is written. Raw JSON
 * fields are JSON strings inside the op, so their text comes back byte-exact.
 */
import type { MemoryStore } from "./memory.js";
import type {
  AgentRow,
  ApiKeyRow,
  ApprovalRow,
  CheckpointRow,
  DispatchRow,
  ExecutionRow,
  ResourceRow,
  StepKind,
  StepRow,
} from "./types.js";

/** One recorded write (see the module comment). */
export type RedoOp =
  | readonly ["insertExecution", ExecutionRow]
  | readonly ["updateExecution", ExecutionRow]
  | readonly ["deleteExecution", string]
  | readonly ["appendEvent", string, string, string, number]
  | readonly ["insertStep", StepRow]
  | readonly ["updateStep", StepRow]
  | readonly ["setOccurrence", string, StepKind, string, string, number]
  | readonly ["clearOccurrences", string]
  | readonly ["insertDispatch", DispatchRow]
  | readonly ["updateDispatch", DispatchRow]
  | readonly ["insertApproval", ApprovalRow]
  | readonly ["updateApproval", ApprovalRow]
  | readonly ["putAgent", AgentRow]
  | readonly ["deleteAgent", string]
  | readonly ["insertApiKey", ApiKeyRow]
  | readonly ["updateApiKey", ApiKeyRow]
  | readonly ["putResource", ResourceRow]
  // A snapshot passes the whole row: replay then checks the seq the store assigns against it.
  | readonly ["insertCheckpoint", Omit<CheckpointRow, "seq"> & { readonly seq?: number }]
  | readonly ["updateCheckpoint", CheckpointRow]
  // The cold tier (cold-tier.ts). Their cold-table writes commit in the same SQLite transaction as
  // the log row that holds them, so replay only has to redo their effect on memory:
  // `archive` moved a settled execution out of memory into the cold tables;
  | readonly ["archive", string]
  // `thaw` brought one back (the ops that rebuild it, its cold rows deleted);
  | readonly ["thaw", string, readonly BundleOp[]]
  // `deleteCold` deleted one that was cold (memory never held it: nothing to redo).
  | readonly ["deleteCold", string];

/** The ops a cold execution's bundle is made of: the inserts that rebuild it (cold-bundle.ts). */
export type BundleOp = Extract<
  RedoOp,
  readonly [
    (
      | "insertExecution"
      | "appendEvent"
      | "insertStep"
      | "insertDispatch"
      | "insertApproval"
      | "putResource"
      | "insertCheckpoint"
    ),
    ...unknown[],
  ]
>;

/** Argument kinds, to check an op read from a file before applying it. */
type Arg = "row" | "string" | "number" | "bundle";

const SIGNATURES: Readonly<Record<RedoOp[0], readonly Arg[]>> = {
  insertExecution: ["row"],
  updateExecution: ["row"],
  deleteExecution: ["string"],
  appendEvent: ["string", "string", "string", "number"],
  insertStep: ["row"],
  updateStep: ["row"],
  setOccurrence: ["string", "string", "string", "string", "number"],
  clearOccurrences: ["string"],
  insertDispatch: ["row"],
  updateDispatch: ["row"],
  insertApproval: ["row"],
  updateApproval: ["row"],
  putAgent: ["row"],
  deleteAgent: ["string"],
  insertApiKey: ["row"],
  updateApiKey: ["row"],
  putResource: ["row"],
  insertCheckpoint: ["row"],
  updateCheckpoint: ["row"],
  archive: ["string"],
  thaw: ["string", "bundle"],
  deleteCold: ["string"],
};

/** The methods a bundle may hold (see {@link BundleOp}). */
const BUNDLE_METHODS: ReadonlySet<string> = new Set([
  "insertExecution",
  "appendEvent",
  "insertStep",
  "insertDispatch",
  "insertApproval",
  "putResource",
  "insertCheckpoint",
]);

/** Characters of op JSON per stored row before a batch or snapshot starts another row. */
export const ROW_CHARS = 1 << 20;

/** Ops serialized by one `JSON.stringify` call. */
const GROUP_OPS = 256;

/**
 * The ops as JSON arrays of at most about {@link ROW_CHARS} characters each (one op larger than
 * that gets a row of its own), so no stored row and no string grows with the size of a batch or
 * of the whole state (V8 caps strings at ≈ 512 M characters).
 *
 * Ops are serialized in groups of {@link GROUP_OPS} with one `JSON.stringify` call each, about half
 * the cost of one call per op; a group whose text is too long is serialized op by op instead. A
 * typical batch is one group and becomes one row without any further copying.
 */
export function* encodeOps(ops: Iterable<RedoOp>, rowChars = ROW_CHARS): Generator<string> {
  const rows = new RowTexts(rowChars);
  let group: RedoOp[] = [];
  for (const op of ops) {
    group.push(op);
    if (group.length === GROUP_OPS) {
      yield* rows.addGroup(group);
      group = [];
    }
  }
  if (group.length > 0) yield* rows.addGroup(group);
  yield* rows.flush();
}

/** Packs JSON array texts of ops into rows of about {@link ROW_CHARS} characters. */
class RowTexts {
  constructor(private readonly rowChars: number) {}
  private parts: string[] = [];
  private chars = 0;

  *addGroup(group: readonly RedoOp[]): Generator<string> {
    let text: string | undefined;
    try {
      text = JSON.stringify(group);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err; // "Invalid string length": go op by op
    }
    if (text !== undefined && text.length <= this.rowChars) {
      yield* this.add(text);
      return;
    }
    for (const op of group) yield* this.add(JSON.stringify([op]));
  }

  private *add(arrayText: string): Generator<string> {
    if (this.chars > 0 && this.chars + arrayText.length > this.rowChars) yield* this.flush();
    this.parts.push(arrayText);
    this.chars += arrayText.length;
  }

  *flush(): Generator<string> {
    const parts = this.parts;
    if (parts.length === 0) return;
    this.parts = [];
    this.chars = 0;
    // Each part is a JSON array: splice their elements into one array.
    yield parts.length === 1 ? parts[0]! : `[${parts.map((p) => p.slice(1, -1)).join(",")}]`;
  }
}

/** Why a stored row could not be applied (the caller adds the file and row). */
export class BadOpError extends Error {}

/** Parse one stored row into its ops, checking each op's method and argument kinds. */
export function decodeOps(text: string): RedoOp[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BadOpError(`not JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(parsed)) throw new BadOpError("not a JSON array of ops");
  for (const [i, op] of parsed.entries()) checkOp(op, i);
  return parsed as RedoOp[];
}

/** Check a decoded cold bundle the same way (cold-tier.ts reads them from their own rows). */
export function checkBundle(ops: unknown): asserts ops is BundleOp[] {
  if (!Array.isArray(ops)) throw new BadOpError("a bundle is not a JSON array of ops");
  for (const [i, op] of ops.entries()) {
    checkOp(op, i);
    if (!BUNDLE_METHODS.has((op as unknown[])[0] as string)) {
      throw new BadOpError(`bundle op ${i} (${(op as unknown[])[0] as string}) is not an insert`);
    }
  }
}

function checkOp(op: unknown, index: number): void {
  if (!Array.isArray(op) || typeof op[0] !== "string" || !Object.hasOwn(SIGNATURES, op[0])) {
    throw new BadOpError(`op ${index} is not a known store write: ${JSON.stringify(op).slice(0, 80)}`);
  }
  const signature = SIGNATURES[op[0] as RedoOp[0]];
  const ok =
    op.length === signature.length + 1 &&
    signature.every((kind, i) => {
      const arg: unknown = op[i + 1];
      if (kind === "bundle") return Array.isArray(arg);
      return kind === "row"
        ? typeof arg === "object" && arg !== null && !Array.isArray(arg)
        : typeof arg === kind;
    });
  if (!ok) throw new BadOpError(`op ${index} (${op[0]}) has arguments of the wrong kinds`);
  if (op[0] === "thaw") checkBundle(op[2]);
}

/** Apply one op to `memory` (the same call the writer made); returns what that call returns. */
export function applyOp(memory: MemoryStore, op: RedoOp): number | undefined {
  switch (op[0]) {
    case "insertExecution":
      memory.insertExecution(op[1]);
      break;
    case "updateExecution":
      memory.updateExecution(op[1]);
      break;
    case "deleteExecution":
      memory.deleteExecution(op[1]);
      break;
    case "appendEvent":
      return memory.appendEvent(op[1], op[2], op[3], op[4]);
    case "insertStep":
      memory.insertStep(op[1]);
      break;
    case "updateStep":
      memory.updateStep(op[1]);
      break;
    case "setOccurrence":
      memory.setOccurrence(op[1], op[2], op[3], op[4], op[5]);
      break;
    case "clearOccurrences":
      memory.clearOccurrences(op[1]);
      break;
    case "insertDispatch":
      memory.insertDispatch(op[1]);
      break;
    case "updateDispatch":
      memory.updateDispatch(op[1]);
      break;
    case "insertApproval":
      memory.insertApproval(op[1]);
      break;
    case "updateApproval":
      memory.updateApproval(op[1]);
      break;
    case "putAgent":
      memory.putAgent(op[1]);
      break;
    case "deleteAgent":
      memory.deleteAgent(op[1]);
      break;
    case "insertApiKey":
      memory.insertApiKey(op[1]);
      break;
    case "updateApiKey":
      memory.updateApiKey(op[1]);
      break;
    case "putResource":
      memory.putResource(op[1]);
      break;
    case "insertCheckpoint": {
      const seq = memory.insertCheckpoint(op[1]);
      if (op[1].seq !== undefined && op[1].seq !== seq) {
        throw new BadOpError(
          `checkpoint ${op[1].key}#${op[1].seq} of ${op[1].executionId} replays as #${seq}`,
        );
      }
      return seq;
    }
    case "updateCheckpoint":
      memory.updateCheckpoint(op[1]);
      break;
    case "archive":
      if (memory.getExecution(op[1]) === undefined)
        throw new BadOpError(`archive of ${op[1]}, not in memory`);
      memory.deleteExecution(op[1]);
      break;
    case "thaw":
      if (memory.getExecution(op[1]) !== undefined)
        throw new BadOpError(`thaw of ${op[1]}, already in memory`);
      for (const inner of op[2]) applyOp(memory, inner);
      break;
    case "deleteCold":
      break;
  }
  return undefined;
}
