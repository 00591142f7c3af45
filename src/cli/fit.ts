/**
 * Column widths that fit a terminal `total` columns wide: the widest columns give way first, all
 * cut to one common cap, and none below its floor (its header's width: a header is never cut).
 * Room the cap leaves over goes back to the columns it cut.
 */
export function fitWidths(natural: number[], floors: number[], total: number, gap = 2): number[] {
  const room = total - gap * Math.max(0, natural.length - 1);
  const capped = (cap: number) => natural.map((w, i) => Math.min(w, Math.max(cap, floors[i])));
  const sum = (ws: number[]) => ws.reduce((s, w) => s + w, 0);
  if (sum(natural) <= room) return natural;
  let [lo, hi] = [0, Math.max(...natural)];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sum(capped(mid)) <= room) lo = mid;
    else hi = mid - 1;
  }
  const widths = capped(lo);
  let spare = room - sum(widths);
  for (let i = 0; spare > 0 && i < widths.length; i++) {
    if (widths[i] < natural[i]) {
      widths[i]++;
      spare--;
    }
  }
  return widths;
}
