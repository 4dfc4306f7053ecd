/**
 * Fork an execution from one of its events (docs/protocol.md §1.9, §4.17), optionally with another
 * policy bundle and a new session, after seeing which steps would replay and which would run
 * live. Hidden, with a note, on a kernel without forks (the legacy generation, or a route that
 * answers 404/405: the client reports both as NotSupportedByKernel).
 */
import { NotSupportedByKernel } from "@rebuno/client";
import type { Execution, Event as KernelEvent } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { useEffect, useState } from "preact/hooks";
import { kernel, message } from "../kernel.js";
import { forkPlan } from "../waterfall/fork-plan.js";

type Support = "checking" | "yes" | { readonly no: string };

export function ForkPanel({
  execution,
  events,
}: {
  execution: Execution;
  events: KernelEvent[];
}): ComponentChild {
  const [support, setSupport] = useState<Support>("checking");
  const [atSeq, setAtSeq] = useState<number | undefined>(undefined);
  const [session, setSession] = useState("");
  const [bundle, setBundle] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    kernel()
      .forkPoints(execution.id)
      .then(
        () => setSupport("yes"),
        (err: unknown) =>
          setSupport({
            no: NotSupportedByKernel.isInstance(err)
              ? "this kernel has no forks (legacy generation)"
              : message(err),
          }),
      );
  }, [execution.id]);
  if (support === "checking") return null;
  if (support !== "yes")
    return h("section", { id: "fork" }, [
      h("h3", null, "Fork"),
      h("p", { class: "muted note", id: "fork-unsupported" }, `Fork is hidden: ${support.no}.`),
    ]);
  const seq = atSeq ?? events[events.length - 1]?.eventSeq ?? 0;
  const plan = forkPlan(events, seq);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    try {
      const forked = await kernel().fork(execution.id, {
        atSeq: seq,
        session: session.trim() === "" ? undefined : session.trim(),
        policyBundle: bundle.trim() === "" ? undefined : bundle,
      });
      location.hash = `#/exec/${forked.id}`;
    } catch (err) {
      setError(message(err));
    }
  };
  return h("section", { id: "fork" }, [
    h("h3", null, "Fork"),
    h("form", { class: "card fork", onSubmit: (e: Event) => void submit(e) }, [
      h("label", { for: "fork-seq" }, "From event "),
      h(
        "select",
        {
          id: "fork-seq",
          value: String(seq),
          onChange: (e: Event & { currentTarget: HTMLSelectElement }) =>
            setAtSeq(Number(e.currentTarget.value)),
        },
        events.map((ev) => {
          const target = (ev.payload as Record<string, unknown>).target;
          return h(
            "option",
            { value: String(ev.eventSeq) },
            `#${ev.eventSeq} ${ev.type}${typeof target === "string" ? ` ${target}` : ""}`,
          );
        }),
      ),
      h("label", { for: "fork-session" }, "New session (optional) "),
      h("input", {
        id: "fork-session",
        value: session,
        onInput: (e: Event & { currentTarget: HTMLInputElement }) => setSession(e.currentTarget.value),
      }),
      h("label", { for: "fork-policy" }, "Policy bundle for the fork (optional YAML) "),
      h("textarea", {
        id: "fork-policy",
        rows: 4,
        value: bundle,
        onInput: (e: Event & { currentTarget: HTMLTextAreaElement }) => setBundle(e.currentTarget.value),
      }),
      h(
        "ul",
        { id: "fork-plan" },
        plan.map((p) =>
          h("li", { "data-plan": p.mode, "data-target": p.target }, [
            h(
              "span",
              { class: `status ${p.mode === "replay" ? "replayed" : "executing"}` },
              p.mode === "replay" ? "replays" : "runs live",
            ),
            ` ${p.target}`,
          ]),
        ),
      ),
      h("button", { type: "submit", id: "fork-submit" }, `Fork at event ${seq}`),
      error === undefined ? null : h("div", { class: "alert" }, error),
    ]),
  ]);
}
