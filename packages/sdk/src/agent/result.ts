/** `Result`: a handler return value that splits the execution output from session state. */

/**
 * Return this from a handler to store `state` for the next turn of the session (read with
 * `previous()`), separately from the `output` callers see. `state` is sent only when it is not
 * null/undefined.
 *
 * @example
 * ```ts
 * // example: in an execution
 * import { previous, Result } from "@rebuno/sdk";
 *
 * const history = (await previous<string[]>()) ?? [];
 * const reply = `turn ${history.length + 1}`;
 * const result = new Result({ output: reply, state: [...history, reply] }); // return it from the handler
 * ```
 */
export class Result<Out = unknown, State = unknown> {
  readonly output: Out;
  readonly state: State | undefined;

  constructor(init: { readonly output: Out; readonly state?: State }) {
    this.output = init.output;
    this.state = init.state;
  }
}
