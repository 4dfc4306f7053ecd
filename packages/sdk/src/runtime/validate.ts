/** Standard Schema validation with the SDK's error shape. */
import { ValidationError, type ValidationIssue } from "@rebuno/protocol";
import type { StandardSchemaV1 } from "../standard-schema.js";

function issuePath(issue: StandardSchemaV1.Issue): PropertyKey[] {
  if (issue.path === undefined) return [];
  return issue.path.map((segment) =>
    typeof segment === "object" && segment !== null ? (segment as StandardSchemaV1.PathSegment).key : segment,
  );
}

/** Maps Standard Schema issues to the protocol's ValidationIssue shape. */
export function toValidationIssues(issues: ReadonlyArray<StandardSchemaV1.Issue>): ValidationIssue[] {
  return issues.map((issue) => ({ path: issuePath(issue), message: issue.message }));
}

/** Human text for issues: `a.b: message; c: message`. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) =>
      issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message,
    )
    .join("; ");
}

/**
 * Validates `value` and returns the schema's output (coerced/defaulted value).
 *
 * @throws ValidationError `<prefix>: <issues>` with `issues` set.
 */
export async function validateWith(
  schema: StandardSchemaV1,
  value: unknown,
  prefix: string,
): Promise<unknown> {
  let result = schema["~standard"].validate(value);
  if (result instanceof Promise) result = await result;
  if (result.issues !== undefined) {
    const issues = toValidationIssues(result.issues);
    throw new ValidationError(`${prefix}: ${formatIssues(issues)}`, { issues });
  }
  return result.value;
}
