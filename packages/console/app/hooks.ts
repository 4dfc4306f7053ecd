/** Preact hooks shared by the views: the hash route and a one-second poll. */
import { useEffect, useState } from "preact/hooks";
import { message } from "./kernel.js";

const REFRESH_MS = 1000;

export function useHash(): string {
  const [hash, setHash] = useState(location.hash || "#/");
  useEffect(() => {
    const on = (): void => setHash(location.hash || "#/");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

/** Poll `load` every second while mounted (and whenever `deps` change). */
export function usePoll<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data: T | undefined; error: string | undefined } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async (): Promise<void> => {
      try {
        const value = await load();
        if (!stopped) {
          setData(value);
          setError(undefined);
        }
      } catch (err) {
        if (!stopped) setError(message(err));
      }
      if (!stopped) timer = setTimeout(run, REFRESH_MS);
    };
    void run();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, deps);
  return { data, error };
}
