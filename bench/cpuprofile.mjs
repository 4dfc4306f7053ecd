// Summarize a `node --cpu-prof` profile for routing work (no goals here).
//
//   node bench/cpuprofile.mjs FILE.cpuprofile            # self time by file and by function
//   node bench/cpuprofile.mjs FILE.cpuprofile --incl X   # inclusive time of functions whose
//                                                        # location contains X (default "packages/")
// Percentages are of busy time ((idle) excluded).
import { readFileSync } from "node:fs";

const [file, mode, filterArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const where = (cf) => cf.url.replace(/.*\/(packages|node_modules)\//, "$1/");
const label = (cf) => `${cf.functionName || "(anon)"} ${where(cf)}:${cf.lineNumber}`;
const add = (map, key, d) => map.set(key, (map.get(key) ?? 0) + d);

let busy = 0;
const selfByFn = new Map();
const selfByFile = new Map();
const inclusive = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]);
  const d = profile.timeDeltas[i] ?? 0;
  if (node.callFrame.functionName === "(idle)") continue;
  busy += d;
  add(selfByFn, label(node.callFrame), d);
  add(
    selfByFile,
    where(node.callFrame).replace(/(node_modules\/\.pnpm\/[^/]+).*/, "$1") || node.callFrame.functionName,
    d,
  );
  if (mode === "--incl") {
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const k = label(byId.get(id).callFrame);
      if (!seen.has(k)) {
        seen.add(k);
        add(inclusive, k, d);
      }
    }
  }
}
const top = (map, n, keep = () => true) =>
  [...map]
    .filter(([k]) => keep(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, t]) => `${((t / busy) * 100).toFixed(1).padStart(5)}%  ${k}`)
    .join("\n");
console.log(`busy ${(busy / 1000).toFixed(0)} ms`);
if (mode === "--incl") {
  const filter = filterArg ?? "packages/";
  console.log(top(inclusive, 60, (k) => k.includes(filter)));
} else {
  console.log(`== self, by file\n${top(selfByFile, 25)}\n== self, by function\n${top(selfByFn, 50)}`);
}
