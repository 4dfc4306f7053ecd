/** The executions list, filtered by status, refreshed every second. */
import type { Execution } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { useState } from "preact/hooks";
import { status, time } from "../format.js";
import { usePoll } from "../hooks.js";
import { kernel } from "../kernel.js";

const STATUSES = ["", "pending", "running", "blocked", "completed", "failed", "cancelled"];

export function Executions(): ComponentChild {
  const [filter, setFilter] = useState("");
  const { data, error } = usePoll(
    () => kernel().list(filter === "" ? { limit: 100 } : { limit: 100, status: filter as never }),
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
