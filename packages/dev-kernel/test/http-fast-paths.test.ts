// The request-path fast paths against the straightforward code they replaced: the in-place router
// vs split-and-compare, node's header object vs the raw-header walk, the UUID loop vs its regex,
// hand-written event payloads vs `stringifyJson`, and nested metric series vs joined keys.
import { stringifyJson } from "@rebuno/protocol";
import { describe, expect, it } from "vitest";
import { jsonString, ruleFields, stepPayload, stepPayloadHead } from "../src/engine/events.js";
import { invalid } from "../src/errors.js";
import { headersFromRaw } from "../src/http/node-adapter.js";
import { type Route, type RouteMatch, Router } from "../src/http/router.js";
import { parseUuid } from "../src/ids.js";
import { KERNEL_ROUTES } from "../src/kernel.js";
import { Metrics } from "../src/metrics.js";
import type { StepRow } from "../src/store/types.js";

// --- reference router: the previous implementation, verbatim in behaviour -----------------------

const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const referenceUuid = (t: string) => (UUID_TEXT.test(t) ? t.toLowerCase() : undefined);

function referenceDecode(segment: string): string | undefined {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function referenceSegments(
  template: readonly string[],
  raw: readonly string[],
): string[] | string | undefined {
  const params: string[] = [];
  let badUuid: string | undefined;
  for (let i = 0; i < template.length; i++) {
    const t = template[i]!;
    const seg = raw[i]!;
    if (t.charCodeAt(0) !== 0x3a) {
      if (t !== seg) return undefined;
      continue;
    }
    const value = referenceDecode(seg);
    if (value === undefined || value === "") return undefined;
    if (t === ":uuid") {
      const id = referenceUuid(value);
      if (id === undefined) {
        badUuid ??= value;
        params.push(value);
        continue;
      }
      params.push(id);
    } else {
      params.push(value);
    }
  }
  return badUuid ?? params;
}

function referenceMatch(routes: readonly Route[], method: string, path: string): RouteMatch {
  const raw = path.split("/").slice(1);
  let allow: string[] | undefined;
  let badUuid: string | undefined;
  for (const route of routes) {
    const template = route.path.split("/").slice(1);
    if (template.length !== raw.length) continue;
    const params = referenceSegments(template, raw);
    if (params === undefined) continue;
    if (typeof params === "string") {
      badUuid ??= params;
      continue;
    }
    if (route.method === method) return { kind: "found", route, params };
    (allow ??= []).push(route.method);
  }
  if (allow !== undefined) return { kind: "method_not_allowed", allow };
  if (badUuid !== undefined) throw invalid(`invalid id ${JSON.stringify(badUuid)}: not a UUID`);
  return { kind: "not_found" };
}

function outcome(f: () => RouteMatch): unknown {
  try {
    const m = f();
    return m.kind === "found" ? { kind: m.kind, route: m.route, params: m.params } : m;
  } catch (err) {
    return { threw: (err as Error).message };
  }
}

const ID = "018f3a2b-4c5d-7e6f-8a9b-00000000abcd";
const SEGMENT_VALUES = [
  ID,
  ID.toUpperCase(),
  "018f3a2b-4c5d-7e6f-8a9b-00000000abc",
  "018f3a2b_4c5d-7e6f-8a9b-00000000abcd",
  "018f3a2b-4c5d-7e6f-8a9b-00000000abcg",
  "9a3f0c5e2b1d4f6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a",
  "name",
  "na%20me",
  "%E2%82%AC",
  "bad%zz",
  "%",
  "018f3a2b-4c5d-7e6f-8a9b-00000000%61bcd",
  "",
  "steps",
];

function corpus(routes: readonly Route[]): string[] {
  const paths = new Set<string>([
    "",
    "/",
    "//",
    "v0/health",
    "x/v0/health",
    "/v0/health/",
    "/v0//executions",
  ]);
  for (const route of routes) {
    const template = route.path.split("/").slice(1);
    paths.add(route.path);
    // Each parameter (and each literal, once) replaced by every sample value.
    for (const value of SEGMENT_VALUES) {
      paths.add(`/${template.map((t) => (t.startsWith(":") ? value : t)).join("/")}`);
      for (let i = 0; i < template.length; i++) {
        paths.add(`/${template.map((t, j) => (j === i ? value : t.startsWith(":") ? ID : t)).join("/")}`);
      }
    }
    paths.add(`/${template.map((t) => (t.startsWith(":") ? ID : t)).join("/")}/extra`);
    paths.add(`/${template.slice(0, -1).join("/")}`);
  }
  return [...paths];
}

describe("router", () => {
  const router = new Router(KERNEL_ROUTES);
  const methods = ["GET", "POST", "PUT", "DELETE", "PATCH"];

  it("matches every path like the split-based matcher (params, 405 Allow order, bad-id errors)", () => {
    const paths = corpus(KERNEL_ROUTES);
    expect(paths.length).toBeGreaterThan(1000);
    for (const path of paths) {
      for (const method of methods) {
        expect(
          outcome(() => router.match(method, path)),
          `${method} ${path}`,
        ).toEqual(outcome(() => referenceMatch(KERNEL_ROUTES, method, path)));
      }
    }
  });

  it("finds the hot agent routes with lowercased ids and a decoded step name", () => {
    const m = router.match("POST", `/v0/executions/${ID.toUpperCase()}/steps/st%65p/complete`);
    expect(m.kind).toBe("found");
    if (m.kind === "found") {
      expect(m.route.path).toBe("/v0/executions/:uuid/steps/:name/complete");
      expect(m.params).toEqual([ID, "step"]);
    }
  });
});

describe("request headers", () => {
  it("headersFromRaw lowercases names and turns repeats into arrays", () => {
    expect(
      headersFromRaw([
        "Host",
        "k",
        "Rebuno-Signature",
        "v1=a",
        "rebuno-signature",
        "v1=b",
        "X",
        "1",
        "x",
        "2",
        "x",
        "3",
      ]),
    ).toEqual({ host: "k", "rebuno-signature": ["v1=a", "v1=b"], x: ["1", "2", "3"] });
  });
});

describe("parseUuid", () => {
  it("agrees with the regex on valid, mixed-case and malformed ids", () => {
    const samples = [
      ID,
      ID.toUpperCase(),
      "018F3a2b-4c5d-7E6f-8a9b-00000000aBcD",
      ...SEGMENT_VALUES,
      `${ID} `,
      ` ${ID}`,
      ID.replace(/-/g, "_"),
      ID.replace(/-/g, ""),
      "018f3a2b-4c5d-7e6f-8a9b-00000000abcd\n",
      "0".repeat(36),
      "ｆ18f3a2b-4c5d-7e6f-8a9b-00000000abcd",
    ];
    for (let i = 0; i < 36; i++)
      for (const c of ["g", "G", "-", "/", ":", "@", "`", "{"]) {
        samples.push(ID.slice(0, i) + c + ID.slice(i + 1));
      }
    for (const s of samples) expect(parseUuid(s), s).toBe(referenceUuid(s));
  });
});

describe("event payload text", () => {
  const strings = [
    "send_email",
    "",
    'a"b',
    "back\\slash",
    "tab\t",
    "nul\u0000",
    "é",
    "𝄞",
    "\ud800",
    "\u007f",
    "~ok/<>",
  ];

  it("jsonString equals JSON.stringify", () => {
    for (const s of strings) expect(jsonString(s)).toBe(JSON.stringify(s));
  });

  it("step payload heads and rule fields equal stringifyJson of the payload objects", () => {
    for (const target of strings) {
      const step = { stepId: "9a3f0c", kind: "tool_call", target } as unknown as StepRow;
      expect(`${stepPayloadHead(step)}}`).toBe(stringifyJson(stepPayload(step)));
      for (const policyHash of [undefined, "sha256:abc", 'q"h']) {
        const extra: Record<string, unknown> = { rule_id: target };
        if (policyHash !== undefined) extra.policy_hash = policyHash;
        expect(`${stepPayloadHead(step)}${ruleFields(target, policyHash)}}`).toBe(
          stringifyJson(stepPayload(step, extra)),
        );
      }
    }
  });
});

describe("metrics", () => {
  it("keeps series in creation order, with label text built once, and held series count", () => {
    const m = new Metrics();
    m.inc("rebuno_http_requests_total", ["code", "200"]);
    const held = m.series("rebuno_http_requests_total", ["code", "404"]);
    held.inc();
    held.inc(2);
    m.inc("rebuno_http_requests_total", ["code", "200"]);
    m.inc("rebuno_http_requests_total", ["code", 'we"ird\\']);
    m.inc("rebuno_replay_hits_total");
    expect(m.get("rebuno_http_requests_total", ["code", "200"])).toBe(2);
    expect(m.get("rebuno_http_requests_total", ["code", "404"])).toBe(3);
    expect(m.get("rebuno_http_requests_total", ["status", "200"])).toBe(0);
    expect(m.get("rebuno_replay_hits_total")).toBe(1);
    const text = m.render([]);
    expect(text).toContain(
      [
        'rebuno_http_requests_total{code="200"} 2',
        'rebuno_http_requests_total{code="404"} 3',
        'rebuno_http_requests_total{code="we\\"ird\\\\"} 1',
      ].join("\n"),
    );
    expect(text).toContain("rebuno_replay_hits_total 1\n");
    expect(text).toContain("rebuno_dispatch_reclaimed_total 0\n");
  });
});
