/**
 * Bundle loading: YAML → validated {@link CompiledPolicy} (docs/protocol.md §9.2).
 *
 * Validation is strict because a bundle is checked once, when it is registered, and the kernel
 * must answer a bad one with a clear 400 rather than misbehave on some later step. Every problem
 * throws `ValidationError` with a message starting `invalid policy bundle: `.
 *
 * Scalar handling mirrors Go's `yaml.v3` decoding into the production kernel's string fields: an
 * unquoted scalar keeps its source text (`equals: 1e+06` is the string `1e+06`, not `1000000`;
 * `equals: true` is `true`), and `null` / empty values are Go zero values, i.e. "not set".
 */

import { createHash } from "node:crypto";
import { ValidationError } from "@rebuno/protocol";
import { type Document, isAlias, isMap, isScalar, isSeq, parseDocument } from "yaml";
import { DurationSyntaxError, parseGoDuration } from "./duration.js";
import {
  type CompiledArgPredicate,
  type CompiledRule,
  type CompiledThen,
  type CompiledWhen,
  createCompiledPolicy,
} from "./evaluate.js";
import { compileGlob, type Glob, GlobSyntaxError } from "./glob.js";
import { compileRe2, RegexSyntaxError } from "./re2.js";
import type {
  CompiledPolicy,
  CompilePolicyOptions,
  JudgeOutcome,
  PolicyDecision,
  PolicyStepKind,
  RateLimitScope,
} from "./types.js";

const PREFIX = "invalid policy bundle: ";
const DEFAULT_JUDGE_THRESHOLD = 0.6;

const TOP_KEYS = ["default_action", "rules"] as const;
// `priority` orders rules as in the production kernel (see orderRules).
const RULE_KEYS = ["id", "priority", "when", "then"] as const;
const WHEN_KEYS = ["target", "targets", "agent_id", "agent_ids", "step_kind", "arguments"] as const;
const PREDICATE_KEYS = ["equals", "contains", "one_of", "regex"] as const;
const THEN_KEYS = ["decision", "reason", "approval_config", "rate_limit", "budget", "judge"] as const;
const APPROVAL_KEYS = ["approvers", "timeout", "message"] as const;
const RATE_LIMIT_KEYS = ["max_calls", "window", "per_what", "max_wait", "on_limiter_error"] as const;
const BUDGET_KEYS = ["max_tokens", "on_exceed"] as const;
const JUDGE_KEYS = ["instructions", "threshold", "fallback"] as const;

const DECISIONS: readonly PolicyDecision[] = ["allow", "deny", "require_approval", "judge"];
const STEP_KINDS: readonly PolicyStepKind[] = ["tool_call", "llm_call", "local"];
const SCOPES: readonly RateLimitScope[] = ["execution", "agent", "global"];
const OUTCOMES: readonly JudgeOutcome[] = ["allow", "deny", "require_approval"];

function invalid(message: string, cause?: unknown): never {
  throw new ValidationError(PREFIX + message, cause === undefined ? {} : { cause });
}

/** Reads YAML nodes with precise error locations; `where` is a dotted path such as `rule "x": then`. */
class NodeReader {
  constructor(private readonly doc: Document) {}

  private deref(node: unknown): unknown {
    return isAlias(node) ? node.resolve(this.doc) : node;
  }

  /** True for an absent value or an explicit YAML null (a Go zero value). */
  isNull(node: unknown): boolean {
    const n = this.deref(node);
    return n === undefined || n === null || (isScalar(n) && n.value === null);
  }

  /** A mapping restricted to `allowed` keys; null reads as an empty mapping. */
  map(node: unknown, where: string, allowed: readonly string[]): Map<string, unknown> {
    const out = new Map<string, unknown>();
    if (this.isNull(node)) return out;
    const n = this.deref(node);
    if (!isMap(n)) invalid(`${where}: expected a mapping`);
    for (const pair of n.items) {
      const key = this.keyText(pair.key, where);
      if (!allowed.includes(key)) {
        invalid(`${where}: unknown key ${JSON.stringify(key)} (allowed: ${allowed.join(", ")})`);
      }
      out.set(key, pair.value);
    }
    return out;
  }

  /** A mapping with arbitrary string keys (the `arguments` block). */
  openMap(node: unknown, where: string): Map<string, unknown> {
    const out = new Map<string, unknown>();
    if (this.isNull(node)) return out;
    const n = this.deref(node);
    if (!isMap(n)) invalid(`${where}: expected a mapping`);
    for (const pair of n.items) out.set(this.keyText(pair.key, where), pair.value);
    return out;
  }

  private keyText(key: unknown, where: string): string {
    const k = this.deref(key);
    if (!isScalar(k)) invalid(`${where}: keys must be scalars`);
    return this.scalarText(k);
  }

  private scalarText(n: { value: unknown; source?: string; type?: string | undefined }): string {
    if (n.value === null) return "";
    if (typeof n.value === "string") return n.value;
    // Plain numbers/booleans keep their source text, as yaml.v3 does for a Go string field.
    return n.source ?? String(n.value);
  }

  seq(node: unknown, where: string): unknown[] {
    if (this.isNull(node)) return [];
    const n = this.deref(node);
    if (!isSeq(n)) invalid(`${where}: expected a list`);
    return n.items;
  }

  str(node: unknown, where: string): string {
    if (this.isNull(node)) return "";
    const n = this.deref(node);
    if (!isScalar(n)) invalid(`${where}: expected a string`);
    return this.scalarText(n);
  }

  strList(node: unknown, where: string): string[] {
    return this.seq(node, where).map((item, i) => this.str(item, `${where}[${i}]`));
  }

  /** A number; `undefined` when absent/null. */
  num(node: unknown, where: string): number | undefined {
    if (this.isNull(node)) return undefined;
    const n = this.deref(node);
    if (!isScalar(n) || typeof n.value !== "number" || !Number.isFinite(n.value)) {
      invalid(`${where}: expected a number`);
    }
    return n.value;
  }

  int(node: unknown, where: string): number | undefined {
    const v = this.num(node, where);
    if (v !== undefined && !Number.isSafeInteger(v)) invalid(`${where}: expected an integer`);
    return v;
  }

  /** A Go duration in ms; `undefined` when absent/empty. Negative durations are refused. */
  duration(node: unknown, where: string): number | undefined {
    const text = this.str(node, where);
    if (text === "") return undefined;
    let ms: number;
    try {
      ms = parseGoDuration(text);
    } catch (err) {
      if (err instanceof DurationSyntaxError) invalid(`${where}: ${err.message}`, err);
      throw err;
    }
    if (ms < 0) invalid(`${where}: duration ${JSON.stringify(text)} must not be negative`);
    return ms;
  }

  /** One of `allowed`, or `fallback` when empty. */
  choice<T extends string>(node: unknown, where: string, allowed: readonly T[], fallback: T): T {
    const v = this.str(node, where);
    if (v === "") return fallback;
    if (!(allowed as readonly string[]).includes(v)) {
      invalid(`${where}: ${JSON.stringify(v)} is not one of ${allowed.join(", ")}`);
    }
    return v as T;
  }
}

function glob(pattern: string, where: string): Glob {
  try {
    return compileGlob(pattern);
  } catch (err) {
    if (err instanceof GlobSyntaxError) invalid(`${where}: ${err.message}`, err);
    throw err;
  }
}

function compileWhen(r: NodeReader, node: unknown, where: string): CompiledWhen {
  const m = r.map(node, where, WHEN_KEYS);
  const when: {
    -readonly [K in keyof CompiledWhen]: CompiledWhen[K];
  } = {};
  const target = r.str(m.get("target"), `${where}.target`);
  if (target !== "") when.target = glob(target, `${where}.target`);
  const targets = r.strList(m.get("targets"), `${where}.targets`);
  if (targets.length > 0) when.targets = targets.map((t, i) => glob(t, `${where}.targets[${i}]`));
  const agentId = r.str(m.get("agent_id"), `${where}.agent_id`);
  if (agentId !== "") when.agentId = agentId;
  const agentIds = r.strList(m.get("agent_ids"), `${where}.agent_ids`);
  if (agentIds.length > 0) when.agentIds = new Set(agentIds);
  const kind = r.str(m.get("step_kind"), `${where}.step_kind`);
  if (kind !== "")
    when.stepKind = r.choice(m.get("step_kind"), `${where}.step_kind`, STEP_KINDS, "tool_call");
  const args = r.openMap(m.get("arguments"), `${where}.arguments`);
  if (args.size > 0) {
    when.arguments = [...args].map(([key, pred]) =>
      compilePredicate(r, key, pred, `${where}.arguments.${key}`),
    );
  }
  return when;
}

function compilePredicate(r: NodeReader, key: string, node: unknown, where: string): CompiledArgPredicate {
  const m = r.map(node, where, PREDICATE_KEYS);
  const pred: { -readonly [K in keyof CompiledArgPredicate]: CompiledArgPredicate[K] } = { key };
  const equals = r.str(m.get("equals"), `${where}.equals`);
  if (equals !== "") pred.equals = equals;
  const contains = r.str(m.get("contains"), `${where}.contains`);
  if (contains !== "") pred.contains = contains;
  const oneOf = r.strList(m.get("one_of"), `${where}.one_of`);
  if (oneOf.length > 0) pred.oneOf = new Set(oneOf);
  const regex = r.str(m.get("regex"), `${where}.regex`);
  if (regex !== "") {
    try {
      pred.regex = compileRe2(regex);
    } catch (err) {
      if (err instanceof RegexSyntaxError) invalid(`${where}.regex: ${err.message}`, err);
      throw err;
    }
  }
  if (pred.equals === undefined && pred.contains === undefined && !pred.oneOf && !pred.regex) {
    invalid(`${where}: argument predicate has no constraint (set equals, contains, one_of or regex)`);
  }
  return pred;
}

function compileThen(r: NodeReader, node: unknown, where: string, id: string, opts: CompilePolicyOptions) {
  const m = r.map(node, where, THEN_KEYS);
  const decisionText = r.str(m.get("decision"), `${where}.decision`);
  if (decisionText === "") invalid(`${where}.decision is required`);
  const decision = r.choice(m.get("decision"), `${where}.decision`, DECISIONS, "deny");
  const then: { -readonly [K in keyof CompiledThen]: CompiledThen[K] } = { decision };

  const reason = r.str(m.get("reason"), `${where}.reason`);
  if (reason !== "") then.reason = reason;

  if (m.has("approval_config") || decision === "require_approval") {
    const w = `${where}.approval_config`;
    const a = r.map(m.get("approval_config"), w, APPROVAL_KEYS);
    const approval: { approvers: string[]; timeoutMs?: number; message?: string } = {
      approvers: r.strList(a.get("approvers"), `${w}.approvers`),
    };
    const timeout = r.duration(a.get("timeout"), `${w}.timeout`);
    if (timeout !== undefined && timeout > 0) approval.timeoutMs = timeout;
    const message = r.str(a.get("message"), `${w}.message`);
    if (message !== "") approval.message = message;
    then.approval = approval;
  }

  if (m.has("rate_limit")) {
    const w = `${where}.rate_limit`;
    const rl = r.map(m.get("rate_limit"), w, RATE_LIMIT_KEYS);
    const maxCalls = r.int(rl.get("max_calls"), `${w}.max_calls`) ?? 0;
    if (maxCalls < 0) invalid(`${w}.max_calls must not be negative`);
    const windowMs = r.duration(rl.get("window"), `${w}.window`) ?? 0;
    const perWhat = r.choice(rl.get("per_what"), `${w}.per_what`, SCOPES, "execution");
    const maxWaitMs = r.duration(rl.get("max_wait"), `${w}.max_wait`) ?? 0;
    const onLimiterError = r.choice(
      rl.get("on_limiter_error"),
      `${w}.on_limiter_error`,
      ["allow", "deny"],
      "allow",
    );
    // max_calls 0 means "no limit" (the kernel only limits when max_calls > 0, docs/protocol.md §6.3).
    if (maxCalls > 0) {
      if (windowMs <= 0) invalid(`${w}.window must be a positive duration when max_calls is set`);
      then.rateLimit = {
        maxCalls,
        windowMs,
        perWhat,
        onLimiterError,
        ...(maxWaitMs > 0 ? { maxWaitMs } : {}),
      };
    }
  }

  if (m.has("budget")) {
    const w = `${where}.budget`;
    const b = r.map(m.get("budget"), w, BUDGET_KEYS);
    const maxTokens = r.int(b.get("max_tokens"), `${w}.max_tokens`) ?? 0;
    if (maxTokens < 0) invalid(`${w}.max_tokens must not be negative`);
    const onExceed = r.choice(b.get("on_exceed"), `${w}.on_exceed`, ["deny", "require_approval"], "deny");
    // Budgets only apply to rules deciding allow (docs/protocol.md §9.6); elsewhere they are inert.
    if (maxTokens > 0 && decision === "allow") then.budget = { maxTokens, onExceed };
  }

  if (m.has("judge") && decision !== "judge") {
    invalid(`${where}.judge is only allowed on rules with decision judge (decision is ${decision})`);
  }
  if (decision === "judge") {
    if (opts.judgeEndpoint === undefined || opts.judgeEndpoint === "") {
      invalid(`rule ${JSON.stringify(id)} uses decision judge but no judge endpoint is configured`);
    }
    const w = `${where}.judge`;
    const j = r.map(m.get("judge"), w, JUDGE_KEYS);
    // 0 reads as "unset" (Go zero value), so the default applies.
    const threshold = r.num(j.get("threshold"), `${w}.threshold`) || DEFAULT_JUDGE_THRESHOLD;
    if (threshold < 0 || threshold > 1) invalid(`${w}.threshold must be between 0 and 1`);
    const fallback = r.choice(j.get("fallback"), `${w}.fallback`, OUTCOMES, "require_approval");
    const instructions = r.str(j.get("instructions"), `${w}.instructions`);
    then.judge = { threshold, fallback, ...(instructions !== "" ? { instructions } : {}) };
  }
  return then;
}

interface LoadedRule {
  readonly rule: CompiledRule;
  /** The rule's `priority`; `undefined` when absent or null. */
  readonly priority: number | undefined;
}

/**
 * Evaluation order. Without any `priority`, document order (the newest documented language). As
 * soon as one rule sets `priority`, the production kernel's order: ascending priority, a rule
 * without one counting as 0 (Go's zero value), and two rules with the same priority are refused
 * with the kernel's message — a tie would leave the order undefined.
 */
function orderRules(loaded: readonly LoadedRule[]): CompiledRule[] {
  if (loaded.every((l) => l.priority === undefined)) return loaded.map((l) => l.rule);
  const byPriority = new Map<number, string>();
  for (const { rule, priority = 0 } of loaded) {
    const existing = byPriority.get(priority);
    if (existing !== undefined) {
      invalid(
        `duplicate priority ${priority} used by ${JSON.stringify(existing)} and ${JSON.stringify(rule.id)}`,
      );
    }
    byPriority.set(priority, rule.id);
  }
  return [...loaded].sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0)).map((l) => l.rule);
}

/**
 * Parses and validates a policy bundle.
 *
 * Rules are evaluated in document order, or by ascending `priority` when the bundle sets any
 * (then priorities must be unique; a rule without one counts as 0), as the production kernel does.
 *
 * @param yaml - The bundle's YAML text; its SHA-256 becomes {@link CompiledPolicy.hash}.
 * @param opts - `judgeEndpoint` enables `judge` rules; without it they are refused.
 * @throws ValidationError (`invalid policy bundle: …`) for any problem.
 */
export function compilePolicyBundle(yaml: string, opts: CompilePolicyOptions = {}): CompiledPolicy {
  const doc = parseDocument(yaml, { uniqueKeys: true, prettyErrors: false });
  const firstError = doc.errors[0];
  if (firstError !== undefined) invalid(`YAML: ${firstError.message}`, firstError);

  const r = new NodeReader(doc);
  const top = r.map(doc.contents, "bundle", TOP_KEYS);
  const defaultAction = r.str(top.get("default_action"), "default_action");
  if (defaultAction !== "" && defaultAction !== "allow" && defaultAction !== "deny") {
    invalid(`default_action: ${JSON.stringify(defaultAction)} is not one of allow, deny`);
  }

  const seen = new Set<string>();
  const loaded: LoadedRule[] = r.seq(top.get("rules"), "rules").map((node, index) => {
    const m = r.map(node, `rules[${index}]`, RULE_KEYS);
    const id = r.str(m.get("id"), `rules[${index}].id`);
    if (id === "") invalid(`rules[${index}]: rule id is required`);
    if (seen.has(id)) invalid(`rules[${index}]: duplicate rule id ${JSON.stringify(id)}`);
    seen.add(id);
    const where = `rule ${JSON.stringify(id)}`;
    const priority = r.int(m.get("priority"), `${where}.priority`);
    if (!m.has("then")) invalid(`${where}: then.decision is required`);
    const rule: CompiledRule = {
      id,
      when: compileWhen(r, m.get("when"), `${where}.when`),
      action: compileThen(r, m.get("then"), `${where}.then`, id, opts),
    };
    return { rule, priority };
  });

  const hash = createHash("sha256").update(yaml, "utf8").digest("hex");
  return createCompiledPolicy(hash, orderRules(loaded), defaultAction === "allow");
}
