/**
 * The console page: a small preact app over `@rebuno/client`. Routes live in the hash (`#/`,
 * `#/exec/ID`, `#/approvals`, `#/agents`, `#/policy/AGENT`, `#/metrics`); the kernel is the page's
 * own origin, or `?kernel=URL` (that kernel then needs CORS for this page's origin). Lists refresh
 * every second; an open execution follows the kernel's event stream. When the kernel answers 401
 * the page asks for a token (session.ts says where it is kept). Views live in views/, the
 * execution's waterfall in waterfall/.
 */
import type { Client } from "@rebuno/client";
import { type ComponentChild, h, render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useHash } from "./hooks.js";
import { kernelUrl, replaceClient, setUnauthorizedHandler, target } from "./kernel.js";
import { kernelClient, storedToken, storeToken } from "./session.js";
import { Agents } from "./views/agents.js";
import { Approvals } from "./views/approvals.js";
import { ExecutionView } from "./views/execution.js";
import { Executions } from "./views/executions.js";
import { MetricsView } from "./views/metrics.js";
import { PolicyView } from "./views/policy.js";
import { SignIn } from "./views/sign-in.js";

interface SignInState {
  /** The token this tab signed in with, if any. */
  readonly token: string | undefined;
  /** A call was answered 401: show the form instead of the views. */
  readonly prompt: boolean;
  /** Bumped on sign-in and sign-out, so every view remounts and reloads with the new client. */
  readonly generation: number;
}

type Route =
  | { readonly tab: "list" | "approvals" | "agents" | "metrics" }
  | { readonly tab: "exec"; readonly id: string }
  | { readonly tab: "policy"; readonly agentId: string };

function route(hash: string): Route {
  const exec = /^#\/exec\/(.+)$/.exec(hash);
  if (exec !== null) return { tab: "exec", id: decodeURIComponent(exec[1]!) };
  const policy = /^#\/policy\/(.+)$/.exec(hash);
  if (policy !== null) return { tab: "policy", agentId: decodeURIComponent(policy[1]!) };
  if (hash === "#/approvals") return { tab: "approvals" };
  if (hash === "#/agents") return { tab: "agents" };
  if (hash === "#/metrics") return { tab: "metrics" };
  return { tab: "list" };
}

function view(r: Route, key: number): ComponentChild {
  switch (r.tab) {
    case "exec":
      return h(ExecutionView, { key: `${key}:${r.id}`, id: r.id });
    case "policy":
      return h(PolicyView, { key: `${key}:${r.agentId}`, agentId: r.agentId });
    case "approvals":
      return h(Approvals, { key, executionId: undefined });
    case "agents":
      return h(Agents, { key });
    case "metrics":
      return h(MetricsView, { key });
    case "list":
      return h(Executions, { key });
  }
}

function App(): ComponentChild {
  const r = route(useHash());
  const [auth, setAuth] = useState<SignInState>({
    token: storedToken(kernelUrl),
    prompt: false,
    generation: 0,
  });
  useEffect(() => {
    setUnauthorizedHandler(() => {
      storeToken(kernelUrl, undefined); // a token answered 401 is not kept for the next load
      setAuth((a) => (a.prompt ? a : { ...a, prompt: true }));
    });
    return () => setUnauthorizedHandler(() => {});
  }, []);
  const switchClient = (token: string | undefined, next: Client): void => {
    replaceClient(next);
    storeToken(kernelUrl, token);
    setAuth((a) => ({ token, prompt: false, generation: a.generation + 1 }));
  };
  const link = (href: string, name: string, on: boolean): ComponentChild =>
    h("a", { href, class: on ? "on" : "", "aria-current": on ? "page" : undefined }, name);
  return h("div", null, [
    h("header", null, [
      h("b", null, "Rebuno"),
      h("nav", null, [
        link("#/", "Executions", r.tab === "list" || r.tab === "exec"),
        link("#/approvals", "Approvals", r.tab === "approvals"),
        link("#/agents", "Agents", r.tab === "agents" || r.tab === "policy"),
        link("#/metrics", "Metrics", r.tab === "metrics"),
      ]),
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
            key: auth.generation,
            tokenRejected: auth.token !== undefined,
            onSignedIn: (token, signedIn) => switchClient(token, signedIn),
          })
        : view(r, auth.generation),
    ]),
  ]);
}

render(h(App, null), document.getElementById("app")!);
