/** Small formatting helpers shared by the views. */
import { type ComponentChild, h } from "preact";

export function json(value: unknown): string {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

export function time(iso: string | undefined): string {
  return iso === undefined ? "" : new Date(iso).toLocaleTimeString();
}

/** `1.2 s`, `340 ms`. */
export function duration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.max(0, Math.round(ms))} ms`;
}

export function status(s: string): ComponentChild {
  return h("span", { class: `status ${s}`, "data-status": s }, s);
}
