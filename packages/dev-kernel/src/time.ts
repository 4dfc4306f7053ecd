/**
 * RFC 3339 UTC text for an epoch-millisecond time, with trailing fractional zeros trimmed the way
 * Go prints `time.RFC3339Nano` (`…:00Z`, `…:00.5Z`, `…:00.123Z`).
 */
export function formatTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // always …ss.mmmZ
  if (iso.endsWith(".000Z")) return `${iso.slice(0, -5)}Z`;
  if (iso.endsWith("00Z")) return `${iso.slice(0, -3)}Z`;
  if (iso.endsWith("0Z")) return `${iso.slice(0, -2)}Z`;
  return iso;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Epoch milliseconds of an RFC 3339 timestamp, or null when it is not one. */
export function parseTime(text: string): number | null {
  if (!RFC3339.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
