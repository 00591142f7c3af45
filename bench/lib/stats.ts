/** The q-quantile (0..1) of samples, nearest rank. */
export function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
