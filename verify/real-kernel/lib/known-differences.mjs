// Every difference the differential suite may find between our dev kernel (newest documented
// protocol) and the Go kernel snapshot (`rebuno dev`, commit 5daac51), one entry per class, with
// the Go source line that explains it. docs/interop.md lists the same classes. A difference that
// matches no class fails the suite; a class that stops occurring is reported (and fails when
// `mustOccur`), so this list cannot rot.
//
// `match(d)` receives { scenario, label, dev, go } with normalised observations.
//
// Not listed, so they must agree: policy rule order by unique `priority` (scenario "priority",
// duplicate priorities refused in "agents") and 400 validation_error for a body over 10 MiB
// (scenario "oversized"), where the dev kernel was aligned with the Go kernel.

const at =
  (scenario, ...labels) =>
  (d) =>
    d.scenario === scenario && labels.some((l) => d.label === l);
const onlyPaths = (d, allowed) => {
  const out = [];
  const walk = (a, b, p) => {
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], `${p}.${k}`);
      return;
    }
    out.push(p);
  };
  walk(d.dev, d.go, "");
  return out.length > 0 && out.every((p) => allowed.test(p));
};

export const KNOWN_DIFFERENCES = [
  {
    id: "webhook-body",
    what: "The webhook body has no dispatch_attempt / lease_timeout_seconds (no attempt fencing).",
    evidence: "internal/dispatcher/dispatcher.go:37-40",
    mustOccur: true,
    match: (d) => d.label.startsWith("webhook keys"),
  },
  {
    id: "policy-hash",
    what: "step.allowed/denied/awaiting_approval events carry no policy_hash.",
    evidence: "internal/projector/projector.go:34-44",
    mustOccur: true,
    match: (d) => /events$/.test(d.label) && onlyPaths(d, /^\.value\.\d+\.payload\.policy_hash$/),
  },
  {
    id: "no-rule-id-on-decision",
    what: "Denied step decisions carry no rule_id.",
    evidence: "internal/domain/dispatch.go:33-40",
    mustOccur: true,
    match: (d) => onlyPaths(d, /^\.body\.rule_id$/),
  },
  {
    id: "no-lease-fencing",
    what:
      "Agent writes are not fenced by the dispatch lease: heartbeat and execution completion are " +
      "accepted while blocked, after cancel or with a superseded dispatch; a foreign or unknown " +
      "dispatch id is a 400 validation_error instead of 409 lease_superseded.",
    evidence: "internal/kernel/dispatch.go:19-31,81-83; internal/kernel/step.go:38-72,114-116",
    mustOccur: true,
    match: (d) =>
      d.dev?.body?.code === "lease_superseded" &&
      [
        "heartbeat while blocked",
        "complete execution while blocked",
        "submit another step while blocked",
        "heartbeat after cancel",
        "old lease after redispatch (supersede)",
        "submit with the other's dispatch",
        "unknown dispatch id",
      ].includes(d.label),
  },
  {
    id: "blocked-execution-completed",
    what: "Because completion is accepted while blocked, the blocked execution ends up completed.",
    evidence: "internal/kernel/dispatch.go:19-31",
    mustOccur: true,
    match: at("blocked-writes", "execution"),
  },
  {
    id: "complete-awaiting-approval",
    what: "Completing a step that awaits approval records it (200 recorded) instead of 409 conflict.",
    evidence: "internal/kernel/step.go:385-398",
    mustOccur: true,
    match: at("blocked-writes", "complete step awaiting approval"),
  },
  {
    id: "step-via-other-execution",
    what:
      "Step routes ignore the execution id in the URL: a step is read and completed through another " +
      "execution's URL instead of 404.",
    evidence: "internal/api/agent.go:34-41,95-108; internal/kernel/step.go:361-376",
    mustOccur: true,
    match: at(
      "cross-execution",
      "complete one's step through two's URL",
      "step of one",
      "step of one via two",
    ),
  },
  {
    id: "cancel-terminal-code",
    what: "Cancelling a terminal execution answers 409 execution_terminal (newest docs: 409 conflict).",
    evidence: "internal/kernel/execution.go:208",
    mustOccur: true,
    match: (d) => d.label === "cancel again" && d.go?.body?.code === "execution_terminal",
  },
  {
    id: "bare-error-messages",
    what:
      "Error envelopes have the same status and code but a bare message (`not found`, `validation " +
      "error`, `unauthorized`, `conflict`): sentinel errors without detail.",
    evidence: "internal/domain/errors.go:5-13; internal/api/response.go:34-37",
    mustOccur: true,
    match: (d) => onlyPaths(d, /^\.body\.message$/),
  },
  {
    id: "null-for-unknown-lists",
    what: "Listing events or steps of an unknown execution answers 200 null instead of 404.",
    evidence:
      "internal/api/client.go:88-108; internal/store/memstore/steps.go:110; internal/store/memstore/events.go:93",
    mustOccur: true,
    match: (d) =>
      d.scenario === "unknown-ids" && (d.label === "events" || d.label === "steps") && d.go?.body === null,
  },
  {
    id: "plain-text-404-405",
    what: "Unknown routes and methods get chi's plain-text 404 / empty 405 instead of a JSON envelope.",
    evidence: "internal/api/router.go:42 (chi.NewRouter without NotFound/MethodNotAllowed handlers)",
    mustOccur: true,
    match: at("unknown-ids", "unknown route", "wrong method"),
  },
  {
    id: "unchecked-step-fields",
    what: "An unknown step kind or idempotency value is accepted (proceed) instead of 400.",
    evidence: "internal/kernel/step.go:17-22,33-36",
    mustOccur: true,
    match: at("malformed", "step: bad kind", "step: bad idempotency"),
  },
  {
    id: "occurrence-shift",
    what: "A consequence of unchecked-step-fields: accepted bad steps advance the dispatch's occurrence.",
    evidence: "internal/kernel/step.go:76-90",
    mustOccur: false,
    match: (d) => d.label === "step: empty target" && onlyPaths(d, /^\.body\.step_id$/),
  },
  {
    id: "newer-fields-refused",
    what: "Fields of the newer protocol (`resources` on submit, `session` on create) are refused (400).",
    evidence: "internal/api/response.go:27; internal/kernel/step.go:17-22; internal/api/client.go:24-28",
    mustOccur: true,
    match: at("malformed", "step: resources (newer field)", "session (newer field)"),
  },
  {
    id: "trailing-garbage",
    what: "A JSON body followed by trailing garbage is accepted (one Decode call, no EOF check).",
    evidence: "internal/api/response.go:22-31",
    mustOccur: true,
    match: at("malformed", "trailing garbage"),
  },
  {
    id: "missing-agent-id",
    what: 'A create without agent_id is a 404 not_found (agent "" looked up) instead of 400.',
    evidence: "internal/kernel/execution.go:130-132",
    mustOccur: true,
    match: at("malformed", "missing agent_id"),
  },
  {
    id: "go-style-agent-keys",
    what:
      "Agent JSON uses Go field names (ID, WebhookURL, Secret, PolicyBundle, RegisteredAt); the POST " +
      "answer echoes the secret.",
    evidence: "internal/domain/agent.go:5-11 (no json tags); internal/api/admin.go:41-46",
    mustOccur: true,
    match: at("agents", "register", "get"),
  },
];

/** Split differences into classified ones (by class id) and unexplained ones. */
export function classify(differences) {
  const byClass = new Map(KNOWN_DIFFERENCES.map((k) => [k.id, []]));
  const unexplained = [];
  for (const d of differences) {
    const k = KNOWN_DIFFERENCES.find((c) => c.match(d));
    if (k) byClass.get(k.id).push(d);
    else unexplained.push(d);
  }
  return { byClass, unexplained };
}
