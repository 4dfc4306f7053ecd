/**
 * The console page: a small preact app over `@rebuno/client`. Routes live in the hash (`#/`,
 * `#/exec/ID`, `#/approvals`, `#/agents`); the kernel is the page's own origin, or `?kernel=URL`
 * (that kernel then needs CORS for this page's origin). Lists refresh every second; an open
 * execution follows the kernel's event stream and refetches its steps on each event. When the
 * kernel answers 401 the page asks for a token (session.ts says where it is kept).
 */
import type { Client } from "@rebuno/client";
import {
  type Agent,
  type Approval,
  type Execution,
  ForbiddenError,
  type Event as KernelEvent,
  type Step,
  UnauthorizedError,
} from "@rebuno/protocol";
import { type ComponentChild, h, render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { kernelClient, readKernelTarget, storedToken, storeToken } from "./session.js";

const target = readKernelTarget();
const kernelUrl = target.url;
/** Replaced on sign-in and sign-out; every call reads the current one. */
let client: Client = kernelClient(kernelUrl, storedToken(kernelUrl));
/** Set by {@link App}: show the sign-in form (a call was answered 401). */
let requestSignIn: () => void = () => {};
const REFRESH_MS = 1000;
const STATUSES = ["", "pending", "running", "blocked", "completed", "failed", "cancelled"];

function useHash(): string {
  const [hash, setHash] = useState(location.hash || "#/");
  useEffect(() => {
    const on = (): void => setHash(location.hash || "#/");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

/** Poll `load` every second while mounted (and whenever `deps` change). */
function usePoll<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data: T | undefined; error: string | undefined } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async (): Promise<void> => {
      try {
        const value = await load();
        if (!stopped) {
          setData(value);
          setError(undefined);
        }
      } catch (err) {
        if (!stopped) setError(message(err));
      }
      if (!stopped) timer = setTimeout(run, REFRESH_MS);
    };
    void run();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, deps);
  return { data, error };
}

/** What to show for a failed call; a 401 also brings up the sign-in form. */
function message(err: unknown): string {
  if (UnauthorizedError.isInstance(err)) {
    requestSignIn();
    return "The kernel asks for a token (401 unauthorized).";
  }
  if (ForbiddenError.isInstance(err)) {
    return `Your token is not allowed to do this (403 ${err.message}). Sign out, then sign in with a token that has that scope.`;
  }
  return err instanceof Error ? err.message : String(err);
}

function SignIn({
  tokenRejected,
  onSignedIn,
}: {
  tokenRejected: boolean;
  onSignedIn: (token: string, signedIn: Client) => void;
}): ComponentChild {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const token = value.trim();
    if (token === "") {
      setError("Paste a token first.");
      return;
    }
    setBusy(true);
    const candidate = kernelClient(kernelUrl, token);
    try {
      await candidate.list({ limit: 1 });
    } catch (err) {
      // 403: the kernel knows the token, it only may not list executions; each view says what it lacks.
      if (!ForbiddenError.isInstance(err)) {
        setBusy(false);
        void candidate.close();
        setError(
          UnauthorizedError.isInstance(err)
            ? "The kernel did not accept this token (401 unauthorized): it is neither its bootstrap token nor a live API key."
            : `Could not check the token: ${err instanceof Error ? err.message : String(err)}`,
        );
        return;
      }
    }
    onSignedIn(token, candidate);
  };
  return h("section", null, [
    h("h2", null, "Sign in"),
    h(
      "p",
      null,
      tokenRejected
        ? "The kernel no longer accepts the token this tab signed in with (401)."
        : "This kernel requires a token (it answered 401 unauthorized).",
    ),
    h("form", { id: "sign-in", class: "card", onSubmit: (e: Event) => void submit(e) }, [
      h("label", { for: "token" }, "Bootstrap token or API key "),
      h("input", {
        id: "token",
        type: "password",
        autocomplete: "off",
        value,
        onInput: (e: Event & { currentTarget: HTMLInputElement }) => setValue(e.currentTarget.value),
      }),
      h("button", { type: "submit", disabled: busy }, "Sign in"),
    ]),
    error === undefined ? null : h("div", { class: "alert", id: "sign-in-error" }, error),
    h(
      "p",
      { class: "muted" },
      "Sent as Authorization: Bearer and kept for this tab only (it is forgotten when the tab closes). Never put a token in the address: it would be kept in history and logs.",
    ),
  ]);
}

function json(value: unknown): string {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

function time(iso: string | undefined): string {
  return iso === undefined ? "" : new Date(iso).toLocaleTimeString();
}

function status(s: string): ComponentChild {
  return h("span", { class: `status ${s}`, "data-status": s }, s);
}

function durationOf(step: Step): string {
  if (step.startedAt === undefined || step.completedAt === undefined) return "";
  const ms = Date.parse(step.completedAt) - Date.parse(step.startedAt);
  return Number.isFinite(ms) && ms >= 0 ? `${ms} ms` : "";
}

/** The human text inside a step error: `{message}`, `{reason}` or the JSON. */
function errorText(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const e = error as Record<string, unknown>;
    for (const k of ["reason", "message", "error"]) if (typeof e[k] === "string") return e[k] as string;
  }
  return json(error);
}

function Executions(): ComponentChild {
  const [filter, setFilter] = useState("");
  const { data, error } = usePoll(
    () => client.list(filter === "" ? { limit: 100 } : { limit: 100, status: filter as never }),
    [filter],
  );
  return h("section", null, [
    h("h2", null, "Executions"),
    h("div", { class: "bar" }, [
      h("label", null, "Status "),
      h(
        "select",
        {
          id: "status-filter",
          value: filter,
          onChange: (e: Event & { currentTarget: HTMLSelectElement }) => setFilter(e.currentTarget.value),
        },
        STATUSES.map((s) => h("option", { value: s }, s === "" ? "all" : s)),
      ),
      h("span", { class: "live" }, "● live"),
    ]),
    error === undefined ? null : h("div", { class: "alert" }, error),
    h("table", { id: "executions" }, [
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Execution", "Agent", "Status", "Created", "Updated"].map((t) => h("th", null, t)),
        ),
      ),
      h(
        "tbody",
        null,
        (data?.executions ?? []).map((e: Execution) =>
          h("tr", { "data-execution": e.id }, [
            h("td", null, h("a", { href: `#/exec/${e.id}` }, h("code", null, e.id))),
            h("td", null, e.agentId),
            h("td", null, status(e.status)),
            h("td", null, time(e.createdAt)),
            h("td", null, time(e.updatedAt)),
          ]),
        ),
      ),
    ]),
  ]);
}

function ApprovalRow({ approval, onDone }: { approval: Approval; onDone: () => void }): ComponentChild {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const decide = async (grant: boolean): Promise<void> => {
    try {
      const options = {
        decidedBy: "console",
        rationale: reason || (grant ? "granted from the console" : "denied from the console"),
      };
      await (grant ? client.grantApproval(approval.id, options) : client.denyApproval(approval.id, options));
      onDone();
    } catch (err) {
      setError(message(err));
    }
  };
  return h("div", { class: "card approval", "data-approval": approval.id }, [
    h("span", null, [status("pending"), " ", approval.message ?? "approval requested", " "]),
    h("a", { href: `#/exec/${approval.executionId}` }, h("code", null, approval.executionId.slice(0, 13))),
    h("input", {
      placeholder: "reason",
      value: reason,
      onInput: (e: Event & { currentTarget: HTMLInputElement }) => setReason(e.currentTarget.value),
    }),
    h("button", { class: "grant", onClick: () => void decide(true) }, "Grant"),
    h("button", { class: "deny", onClick: () => void decide(false) }, "Deny"),
    error === undefined ? null : h("span", { class: "alert" }, error),
  ]);
}

function Approvals({ executionId }: { executionId: string | undefined }): ComponentChild {
  const [nonce, setNonce] = useState(0);
  const { data, error } = usePoll(
    async () =>
      (await client.listApprovals({ status: "pending" })).filter(
        (a) => executionId === undefined || a.executionId === executionId,
      ),
    [executionId, nonce],
  );
  const list = data ?? [];
  if (executionId !== undefined && list.length === 0) return h("div", null);
  return h("section", { id: "approvals" }, [
    h(executionId === undefined ? "h2" : "h3", null, "Pending approvals"),
    error === undefined ? null : h("div", { class: "alert" }, error),
    list.length === 0 ? h("p", { class: "muted" }, "Nothing waiting for a decision.") : null,
    ...list.map((a) => h(ApprovalRow, { key: a.id, approval: a, onDone: () => setNonce((n) => n + 1) })),
  ]);
}

/** The newest delivery outcome, when it is a failure: what the kernel could not do, and why. */
function DeliveryAlert({ events }: { events: KernelEvent[] }): ComponentChild {
  const last = [...events]
    .reverse()
    .find((e) => e.type.startsWith("dispatch.") && e.type !== "dispatch.queued");
  if (last === undefined || last.type !== "dispatch.failed") return null;
  const p = last.payload;
  // An HTTP status means the agent answered (401/403: wrong secret); a class alone means it was not reached.
  const cause =
    p.http_status !== undefined
      ? `HTTP ${String(p.http_status)}`
      : typeof p.error_class === "string"
        ? p.error_class
        : "";
  const retry =
    typeof p.next_attempt_at === "string" ? `next retry at ${time(p.next_attempt_at)}` : "no retry left";
  return h("div", { class: "alert", id: "delivery-failure" }, [
    h(
      "b",
      null,
      `Webhook delivery failed (attempt ${String(p.attempt)}${p.max_attempts === undefined ? "" : ` of ${String(p.max_attempts)}`})`,
    ),
    `${typeof p.error === "string" ? p.error : "the agent did not acknowledge the webhook"}${cause === "" ? "" : ` — ${cause}`}; ${retry}.`,
  ]);
}

function ExecutionView({ id }: { id: string }): ComponentChild {
  const [execution, setExecution] = useState<Execution | undefined>(undefined);
  const [steps, setSteps] = useState<Step[]>([]);
  const [events, setEvents] = useState<KernelEvent[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    const abort = new AbortController();
    const refresh = async (): Promise<void> => {
      const [e, s] = await Promise.all([client.get(id), client.listSteps(id)]);
      if (!abort.signal.aborted) {
        setExecution(e);
        // In the order they ran (the kernel lists them by id); steps that never started go last.
        setSteps([...s].sort((a, b) => (a.startedAt ?? "~").localeCompare(b.startedAt ?? "~")));
      }
    };
    setEvents([]);
    const follow = async (): Promise<void> => {
      await refresh();
      for await (const event of client.followEvents(id, { signal: abort.signal, pollMs: 250 })) {
        setEvents((list) => [...list, event]);
        await refresh();
      }
    };
    follow().catch((err: unknown) => {
      if (!abort.signal.aborted) setError(message(err));
    });
    return () => abort.abort();
  }, [id]);
  return h("section", null, [
    h("h2", null, [
      "Execution ",
      h("code", null, id),
      " ",
      execution === undefined ? null : status(execution.status),
    ]),
    error === undefined ? null : h("div", { class: "alert" }, error),
    h(DeliveryAlert, { events }),
    execution === undefined
      ? null
      : h("div", { class: "card grid" }, [
          h("span", { class: "muted" }, "agent"),
          h("span", null, execution.agentId),
          h("span", { class: "muted" }, "created"),
          h("span", null, new Date(execution.createdAt).toLocaleString()),
          h("span", { class: "muted" }, "input"),
          h("pre", null, json(execution.input)),
          ...(execution.output === undefined
            ? []
            : [h("span", { class: "muted" }, "output"), h("pre", null, json(execution.output))]),
          ...(execution.failureReason === undefined
            ? []
            : [h("span", { class: "muted" }, "failure"), h("span", null, execution.failureReason)]),
        ]),
    h(Approvals, { executionId: id }),
    h("h3", null, "Steps"),
    h("table", { id: "steps" }, [
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Step", "Kind", "Status", "Args", "Result / error", "Duration"].map((t) => h("th", null, t)),
        ),
      ),
      h(
        "tbody",
        null,
        steps.map((s) =>
          h("tr", { "data-step": s.stepId, "data-target": s.target }, [
            h("td", null, [
              h("b", null, s.target),
              h("div", { class: "muted" }, `#${s.occurrence} ${s.idempotency}`),
            ]),
            h("td", null, s.kind),
            h("td", null, status(s.status)),
            h("td", null, h("pre", null, json(s.args))),
            h(
              "td",
              null,
              h(
                "pre",
                { class: s.error === undefined ? "" : "error" },
                s.error === undefined ? json(s.result) : errorText(s.error),
              ),
            ),
            h("td", null, durationOf(s)),
          ]),
        ),
      ),
    ]),
    h("h3", null, ["Events ", h("span", { class: "live" }, "● following")]),
    h("table", { id: "events" }, [
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["#", "Time", "Type", "Payload"].map((t) => h("th", null, t)),
        ),
      ),
      h(
        "tbody",
        null,
        events.map((e) =>
          h("tr", { "data-event": e.type }, [
            h("td", null, String(e.eventSeq)),
            h("td", null, time(e.occurredAt)),
            h("td", null, h("code", null, e.type)),
            h("td", null, h("pre", null, JSON.stringify(e.payload))),
          ]),
        ),
      ),
    ]),
  ]);
}

function Agents(): ComponentChild {
  const { data, error } = usePoll(() => client.listAgents(), []);
  return h("section", null, [
    h("h2", null, "Agents"),
    error === undefined ? null : h("div", { class: "alert" }, error),
    h("table", { id: "agents" }, [
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Agent", "Webhook", "Registered", "Policy"].map((t) => h("th", null, t)),
        ),
      ),
      h(
        "tbody",
        null,
        (data ?? []).map((a: Agent) =>
          h("tr", { "data-agent": a.id }, [
            h("td", null, h("b", null, a.id)),
            h("td", null, h("code", null, a.webhookUrl)),
            h("td", null, time(a.registeredAt)),
            h("td", null, h("pre", null, a.policyBundle ?? "(none: every step allowed)")),
          ]),
        ),
      ),
    ]),
  ]);
}

interface SignInState {
  /** The token this tab signed in with, if any. */
  readonly token: string | undefined;
  /** A call was answered 401: show the form instead of the views. */
  readonly prompt: boolean;
  /** Bumped on sign-in and sign-out, so every view remounts and reloads with the new client. */
  readonly generation: number;
}

function App(): ComponentChild {
  const hash = useHash();
  const [auth, setAuth] = useState<SignInState>({
    token: storedToken(kernelUrl),
    prompt: false,
    generation: 0,
  });
  useEffect(() => {
    requestSignIn = () => {
      storeToken(kernelUrl, undefined); // a token answered 401 is not kept for the next load
      setAuth((a) => (a.prompt ? a : { ...a, prompt: true }));
    };
    return () => {
      requestSignIn = () => {};
    };
  }, []);
  const switchClient = (token: string | undefined, next: Client): void => {
    void client.close();
    client = next;
    storeToken(kernelUrl, token);
    setAuth((a) => ({ token, prompt: false, generation: a.generation + 1 }));
  };
  const exec = /^#\/exec\/(.+)$/.exec(hash);
  const tab =
    exec !== null ? "exec" : hash === "#/approvals" ? "approvals" : hash === "#/agents" ? "agents" : "list";
  const link = (href: string, name: string, on: boolean): ComponentChild =>
    h("a", { href, class: on ? "on" : "" }, name);
  const key = auth.generation;
  return h("div", null, [
    h("header", null, [
      h("b", null, "Rebuno"),
      link("#/", "Executions", tab === "list" || tab === "exec"),
      link("#/approvals", "Approvals", tab === "approvals"),
      link("#/agents", "Agents", tab === "agents"),
      h("span", { class: "kernel" }, kernelUrl),
      auth.token === undefined
        ? null
        : h(
            "button",
            { id: "sign-out", onClick: () => switchClient(undefined, kernelClient(kernelUrl, undefined)) },
            "Sign out",
          ),
    ]),
    h("main", null, [
      target.droppedUrlToken
        ? h(
            "div",
            { class: "alert", id: "url-token" },
            "A token in the address was ignored and removed from it: addresses are kept in history and logs. Sign in with the form instead.",
          )
        : null,
      auth.prompt
        ? h(SignIn, {
            key,
            tokenRejected: auth.token !== undefined,
            onSignedIn: (token, signedIn) => switchClient(token, signedIn),
          })
        : exec !== null
          ? h(ExecutionView, { key: `${key}:${exec[1]}`, id: decodeURIComponent(exec[1]!) })
          : tab === "approvals"
            ? h(Approvals, { key, executionId: undefined })
            : tab === "agents"
              ? h(Agents, { key })
              : h(Executions, { key }),
    ]),
  ]);
}

render(h(App, null), document.getElementById("app")!);
