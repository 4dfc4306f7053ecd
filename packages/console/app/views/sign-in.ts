/** The sign-in form, shown when the kernel answers 401 (session.ts says where the token is kept). */
import type { Client } from "@rebuno/client";
import { ForbiddenError, UnauthorizedError } from "@rebuno/protocol";
import { type ComponentChild, h } from "preact";
import { useState } from "preact/hooks";
import { kernelUrl } from "../kernel.js";
import { kernelClient } from "../session.js";

export function SignIn({
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
