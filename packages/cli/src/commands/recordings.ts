/**
 * `rebuno exec export|fork|fork-points`: save an execution as a recording file, and fork it at an
 * event with what will replay and what will run live printed (docs/protocol.md §1.9).
 */
import { writeFileSync } from "node:fs";
import { compilePolicyBundle } from "@rebuno/policy";
import type { Event, Step } from "@rebuno/protocol";
import type { Command } from "commander";
import { UsageError } from "../exit-codes.js";
import { readTextFile } from "../input.js";
import { json, keyValues, table } from "../output.js";
import { inRecordingOrder, type Register } from "./executions.js";

const TERMINAL_STEP_EVENTS = new Set(["step.succeeded", "step.failed", "step.denied", "step.cancelled"]);

/** A non-negative integer option (`--at 0` is a valid fork point). */
function parseSeq(value: string, option: string): number {
  if (!/^\d+$/.test(value))
    throw new UsageError(`${option} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * Which of the source's steps a fork at `atSeq` copies (settled at or before it: they replay)
 * and which it does not (they run live, under the fork's policy).
 */
export function forkPlan(
  steps: readonly Step[],
  events: readonly Event[],
  atSeq: number,
): { replay: Step[]; live: Step[] } {
  const settledAt = new Map<string, number>();
  for (const e of events) {
    const id = (e.payload as { step_id?: unknown }).step_id;
    if (typeof id === "string" && TERMINAL_STEP_EVENTS.has(e.type)) settledAt.set(id, e.eventSeq);
  }
  const replay: Step[] = [];
  const live: Step[] = [];
  for (const s of steps)
    ((settledAt.get(s.stepId) ?? Number.POSITIVE_INFINITY) <= atSeq ? replay : live).push(s);
  return { replay, live };
}

function stepRows(steps: readonly Step[]): string[][] {
  return steps.map((s) => [s.kind, s.target, s.status, s.stepId.slice(0, 12)]);
}

export function registerRecordingCommands(exec: Command, register: Register): void {
  register(
    exec
      .command("export")
      .description("write an execution as a recording (JSON, format rebuno.recording/1) for offline replay")
      .argument("<id>", "execution id")
      .option("--children", "include the recordings of the subagents it spawned")
      .option("-o, --output <file>", "write to this file instead of stdout"),
    async (ctx, o: { children?: boolean; output?: string }, [id]) => {
      const recording = await ctx.client().exportRecording(id!, { children: o.children === true });
      const text = json(recording);
      if (o.output === undefined) return ctx.io.stdout(text);
      try {
        writeFileSync(o.output, text);
      } catch (error) {
        throw new UsageError(
          `--output: cannot write ${JSON.stringify(o.output)} (${(error as { code?: string }).code ?? "unwritable"})`,
        );
      }
      ctx.io.stderr(
        `wrote ${recording.steps.length} steps and ${recording.events.length} events to ${o.output}\n`,
      );
    },
  );

  register(
    exec
      .command("fork-points")
      .description("where an execution can be forked: its last event and resource checkpoint coverage")
      .argument("<id>", "execution id"),
    async (ctx, _o, [id]) => {
      const points = await ctx.client().forkPoints(id!);
      if (ctx.json) return ctx.io.stdout(json(points));
      const rows = points.checkpoints.map((c) => [
        c.key,
        String(c.generation),
        String(c.coveredSeq),
        c.invalidatedSeq === undefined ? "" : String(c.invalidatedSeq),
      ]);
      ctx.io.stdout(
        `fork with --at 0..${points.latestSeq}\n` +
          (rows.length === 0
            ? "no resource checkpoints\n"
            : `${table(["RESOURCE", "GENERATION", "COVERED SEQ", "INVALIDATED SEQ"], rows, { color: ctx.color })}\n`),
      );
    },
  );

  register(
    exec
      .command("fork")
      .description("fork an execution at an event: steps settled by then replay, the rest run live")
      .argument("<id>", "execution id")
      .requiredOption("--at <seq>", "event sequence number to fork at (see exec fork-points)")
      .option("--policy <file>", "policy bundle YAML for the fork (compiled here first)")
      .option("--session <name>", "a new session for the fork"),
    async (ctx, o: { at: string; policy?: string; session?: string }, [id]) => {
      const atSeq = parseSeq(o.at, "--at");
      let policyBundle: string | undefined;
      if (o.policy !== undefined) {
        policyBundle = readTextFile(o.policy, "--policy");
        compilePolicyBundle(policyBundle); // a bundle that does not compile fails before the fork
      }
      const client = ctx.client();
      const [steps, points] = await Promise.all([client.listSteps(id!), client.forkPoints(id!)]);
      if (atSeq > points.latestSeq) {
        throw new UsageError(`--at ${atSeq} is beyond the last event of ${id} (${points.latestSeq})`);
      }
      const events: Event[] = [];
      for (;;) {
        const page = await client.events(id!, { afterSeq: events.at(-1)?.eventSeq ?? 0, limit: 1000 });
        events.push(...page);
        if (page.length < 1000) break;
      }
      const plan = forkPlan(inRecordingOrder(steps, events), events, atSeq);
      const fork = await client.fork(id!, { atSeq, session: o.session, policyBundle });
      if (ctx.json) return ctx.io.stdout(json({ fork, replay: plan.replay, live: plan.live }));
      ctx.io.stdout(
        `${keyValues([
          ["fork", fork.id],
          ["forked from", `${id} at event ${atSeq}`],
          ["status", fork.status],
          ["session", fork.session],
          ["policy", policyBundle === undefined ? "the source's" : o.policy],
        ])}\n\nreplays (settled at or before event ${atSeq}):\n${table(["KIND", "TARGET", "STATUS", "STEP"], stepRows(plan.replay))}\n` +
          `\nruns live (the source's later steps; the fork may take other paths):\n${table(["KIND", "TARGET", "STATUS", "STEP"], stepRows(plan.live))}\n`,
      );
    },
  );
}
