// The clock column of a timeline line: always hh:mm:ss.mmm (UTC), whatever fractional precision the
// kernel's timestamp carries (Go's RFC 3339 drops trailing zeros: "…:01.41Z").
import { formatEntry, type TimelineEntry } from "@rebuno/cli";
import { describe, expect, it } from "vitest";

const entry = (occurredAt: string): TimelineEntry => ({
  executionId: "e",
  seq: 1,
  type: "execution.started",
  occurredAt,
  subject: "execution",
  outcome: "running",
  payload: {},
});

describe("formatEntry clock column", () => {
  it.each([
    ["2026-12-03T06:30:01.41Z", "06:30:01.410"],
    ["2026-12-03T06:30:01Z", "06:30:01.000"],
    ["2026-12-03T06:30:01.123456789Z", "06:30:01.123"],
    ["2026-12-03T07:30:01.5+01:00", "06:30:01.500"],
  ])("%s → %s", (at, clock) => {
    expect(formatEntry(entry(at)).trimStart().startsWith(clock)).toBe(true);
  });
});
