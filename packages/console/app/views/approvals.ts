/** Pending approvals, all or one execution's, with grant and deny buttons. */
import type { Approval } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { useState } from "preact/hooks";
import { status } from "../format.js";
import { usePoll } from "../hooks.js";
import { kernel, message } from "../kernel.js";

function ApprovalRow({ approval, onDone }: { approval: Approval; onDone: () => void }): ComponentChild {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const decide = async (grant: boolean): Promise<void> => {
    try {
      const options = {
        decidedBy: "console",
        rationale: reason || (grant ? "granted from the console" : "denied from the console"),
      };
      await (grant
        ? kernel().grantApproval(approval.id, options)
        : kernel().denyApproval(approval.id, options));
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

export function Approvals({ executionId }: { executionId: string | undefined }): ComponentChild {
  const [nonce, setNonce] = useState(0);
  const { data, error } = usePoll(
    async () =>
      (await kernel().listApprovals({ status: "pending" })).filter(
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
