// A tiny observable value with a hook, enough for the console's few pieces of shared state.
import { useEffect, useState } from 'preact/hooks';

export interface Signal<T> {
  value: T;
  subscribe(fn: (v: T) => void): () => void;
}

export function signal<T>(initial: T): Signal<T> {
  let current = initial;
  const subs = new Set<(v: T) => void>();
  return {
    get value() {
      return current;
    },
    set value(v: T) {
      current = v;
      for (const fn of [...subs]) fn(v);
    },
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
  };
}

export function useSignal<T>(s: Signal<T>): T {
  const [v, set] = useState(s.value);
  useEffect(() => {
    set(s.value);
    return s.subscribe(set);
  }, [s]);
  return v;
}
