import { useCallback, useEffect, useState } from 'preact/hooks';
import { describeError } from './api';

/** Polling: the first delay, and the longest it grows to while nothing changes or the server cannot be reached. */
const POLL_FIRST_MS = 2000;
const POLL_LONGEST_MS = 30_000;

/**
 * Load something when the deps change; `reload` loads it again. With `poll`, load it again and again: every 2 s
 * after a change, half as often again each time nothing changed (up to every 30 s), twice as late after an error,
 * and not while the tab is hidden. The data shown stays until new data replaces it.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], options: { poll?: boolean } = {}) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay = POLL_FIRST_MS;
    let last: string | undefined;
    const again = () => {
      if (!live || !options.poll) return;
      timer = setTimeout(() => {
        if (document.hidden) again();
        else run();
      }, delay);
    };
    const run = () => {
      load().then(
        (d) => {
          if (!live) return;
          const text = JSON.stringify(d);
          delay = text === last ? Math.min(delay * 1.5, POLL_LONGEST_MS) : POLL_FIRST_MS;
          if (text !== last) setData(d);
          last = text;
          setError(null);
          again();
        },
        (e: unknown) => {
          if (!live) return;
          setError(describeError(e));
          delay = Math.min(delay * 2, POLL_LONGEST_MS);
          again();
        },
      );
    };
    setError(null);
    run();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [...deps, n]);
  const reload = useCallback(() => setN((x) => x + 1), []);
  return { data, error, reload };
}
