// Policy `regex` predicates under hostile patterns (the dev kernel's re2js engine).
//
//   pnpm tsc -b && node bench/policy-regex.mjs [--quick]
//
// Patterns whose backtracking cost is exponential in the argument's length (`^(a+)+$`,
// `(a|aa)+$`, `(x+x+)+y`) are evaluated by the dev kernel's policy engine against 100 000-character
// near-miss arguments, next to a harmless pattern over the same argument (`^a+!$`, …), so the
// ratio shows whether the hostile pattern costs more than an ordinary one (goal: about 1×, i.e.
// linear). For scale, V8's backtracking `RegExp` (what the kernel used before) is timed on the
// hostile patterns at a few dozen characters only: each extra character roughly doubles its time
// (`^(a+)+$` took 16.9 s at 28 characters on the 2-core dev machine).
import { compilePolicyBundle } from "@rebuno/policy";
import { environment, ratio, report, round, summarize } from "./lib/stats.mjs";

const QUICK = process.argv.includes("--quick");
const ROUNDS = QUICK ? 5 : 20;
const LENGTH = 100_000;
// [hostile pattern, harmless pattern, fill character, last character, V8 backtracking length]
const PATTERNS = [
  ["^(a+)+$", "^a+!$", "a", "!", 22],
  ["(a|aa)+$", "^a+b$", "a", "b", 26],
  ["(x+x+)+y", "^x+y$", "x", "x", 20],
];

function bundle(predicate) {
  return `default_action: allow
rules:
  - id: r
    when: { target: write, arguments: { text: ${predicate} } }
    then: { decision: deny }
`;
}

function time(fn) {
  const samples = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0));
  }
  return summarize(samples);
}

const results = [];
for (const [pattern, harmless, fill, last, backtrackLength] of PATTERNS) {
  const text = fill.repeat(LENGTH) + last;
  const step = { agentId: "a", kind: "tool_call", target: "write", args: { text } };
  const hostile = compilePolicyBundle(bundle(`{ regex: ${JSON.stringify(pattern)} }`));
  const baseline = compilePolicyBundle(bundle(`{ regex: ${JSON.stringify(harmless)} }`));
  const decision = hostile.evaluate(step).decision;
  const re2 = time(() => hostile.evaluate(step));
  const plain = time(() => baseline.evaluate(step));
  const native = new RegExp(pattern, "u");
  const t0 = process.hrtime.bigint();
  native.test(fill.repeat(backtrackLength) + last);
  const backtrackMs = Number(process.hrtime.bigint() - t0) / 1e6;
  results.push({
    pattern,
    decision,
    re2MeanMs: round(re2.meanUs / 1000),
    harmlessMeanMs: round(plain.meanUs / 1000),
    ratioToHarmless: ratio(re2.meanUs, plain.meanUs),
    v8BacktrackingMs: round(backtrackMs),
    v8BacktrackingChars: backtrackLength + 1,
  });
}
report("policy-regex", { environment: environment(), argumentLength: LENGTH, results });
