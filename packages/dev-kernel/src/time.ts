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
