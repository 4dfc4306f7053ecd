// Differential suite: the same raw-HTTP scenarios against our dev kernel and the Go kernel
// (`rebuno dev`), compared field by field after normalising ids and times. Every difference must
// belong to a documented class (lib/known-differences.mjs, docs/interop.md).
import { writeFileSync } from "node:fs";
import { startDevKernel } from "@rebuno/dev-kernel";
import { computeStepId } from "@rebuno/protocol";
import { beforeAll, describe, expect, test } from "vitest";
import { runDifferential } from "./lib/differential.mjs";
import { classify, KNOWN_DIFFERENCES } from "./lib/known-differences.mjs";
import { SCENARIOS } from "./lib/scenarios.mjs";

let run;
let classes;

beforeAll(async () => {
  run = await runDifferential({ startDevKernel, computeStepId });
  classes = classify(run.differences);
  const labels = run.results.reduce((n, r) => n + new Set(r.dev.map(([l]) => l)).size, 0);
  const lines = [
    `differential: ${run.results.length} scenarios, ${labels} observations compared, ${run.differences.length} differences`,
  ];
  for (const k of KNOWN_DIFFERENCES) lines.push(`  ${k.id}: ${classes.byClass.get(k.id).length}`);
  for (const d of classes.unexplained) lines.push(`  UNEXPLAINED ${d.scenario} | ${d.label}`);
  console.log(lines.join("\n"));
  writeFileSync(
    ".tmp/real-kernel-differential.json",
    JSON.stringify({ ...run, unexplained: classes.unexplained }, null, 1),
  );
});

describe("dev kernel vs Go kernel (rebuno dev), raw HTTP", () => {
  test.each(SCENARIOS.map((s) => s.name))("%s runs to the end on both kernels", (name) => {
    const r = run.results.find((x) => x.scenario === name);
    const errors = ["dev", "go"].flatMap((side) =>
      r[side].filter(([l]) => l === "scenario error").map(([, e]) => `${side}: ${e}`),
    );
    expect(errors).toEqual([]);
  });

  test("step ids follow the protocol's derivation on both kernels", () => {
    const checks = run.results.flatMap((r) =>
      ["dev", "go"].flatMap((s) => r[s].filter(([l]) => l === "step id derivation")),
    );
    expect(checks.length).toBe(2);
    for (const [, v] of checks) expect(v).toEqual({ value: true });
  });

  test("args hashes, decisions, events and states agree outside the documented classes", () => {
    expect(
      classes.unexplained.map((d) => ({ scenario: d.scenario, label: d.label, dev: d.dev, go: d.go })),
    ).toEqual([]);
  });

  test("every documented class still occurs (the list does not rot)", () => {
    const missing = KNOWN_DIFFERENCES.filter(
      (k) => k.mustOccur && classes.byClass.get(k.id).length === 0,
    ).map((k) => k.id);
    expect(missing).toEqual([]);
  });
});
