/** The agents list; each links to its policy page. */
import type { Agent } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { time } from "../format.js";
import { usePoll } from "../hooks.js";
import { kernel } from "../kernel.js";

export function Agents(): ComponentChild {
  const { data, error } = usePoll(() => kernel().listAgents(), []);
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
            h("td", null, [
              h("pre", null, a.policyBundle ?? "(none: every step allowed)"),
              h(
                "a",
                { href: `#/policy/${encodeURIComponent(a.id)}`, class: "policy-link" },
                "Edit, test against recent executions →",
              ),
            ]),
          ]),
        ),
      ),
    ]),
  ]);
}
