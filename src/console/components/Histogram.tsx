// The time histogram of a search, drawn as bars with uPlot. Dragging across it, or clicking a bar,
// narrows the search to that stretch of time.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Bucket } from '../searchRequest';

interface Props {
  buckets: Bucket[];
  stepMs: number;
  onRange: (fromMs: number, toMs: number) => void;
}

/** Every bucket from the first to the last, the empty ones as zero. */
function series(buckets: Bucket[], step: number): [number[], number[]] {
  const xs: number[] = [];
  const ys: number[] = [];
  if (!buckets.length) return [xs, ys];
  const byKey = new Map(buckets.map((b) => [b.key, b.doc_count]));
  const last = buckets[buckets.length - 1].key;
  const regular = (last - buckets[0].key) / step <= 5000;
  const keys = regular ? Array.from({ length: Math.round((last - buckets[0].key) / step) + 1 }, (_, i) => buckets[0].key + i * step) : buckets.map((b) => b.key);
  for (const k of keys) {
    xs.push(k / 1000);
    ys.push(byKey.get(k) ?? 0);
  }
  return [xs, ys];
}

export function Histogram({ buckets, stepMs, onRange }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const onRangeRef = useRef(onRange);
  onRangeRef.current = onRange;

  useEffect(() => {
    const el = box.current;
    if (!el || !buckets.length) return;
    const [xs, ys] = series(buckets, stepMs);
    let dragged = false;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: 160,
      legend: { show: false },
      // the form's times are UTC: so are the axis labels
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
      scales: { x: { time: true, range: (_u, min, max) => [min - stepMs / 2000, max + stepMs / 2000] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [{ stroke: '#444', grid: { stroke: '#eee' } }, { stroke: '#444', grid: { stroke: '#eee' }, size: 50 }],
      series: [{}, { label: 'records', fill: '#2f6fb4', stroke: '#1f4f86', width: 1, paths: uPlot.paths.bars!({ size: [0.9, 80], align: 0 }), points: { show: false } }],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 3) return;
            dragged = true;
            const from = u.posToVal(u.select.left, 'x') * 1000;
            const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            onRangeRef.current(Math.floor(from), Math.ceil(to));
          },
        ],
      },
    };
    const plot = new uPlot(opts, [xs, ys], el);
    const click = () => {
      if (dragged) {
        dragged = false;
        return;
      }
      const i = plot.cursor.idx;
      if (i === null || i === undefined || !ys[i]) return;
      onRangeRef.current(xs[i] * 1000, xs[i] * 1000 + stepMs);
    };
    plot.over.addEventListener('click', click);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height: 160 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [buckets, stepMs]);

  const total = buckets.reduce((n, b) => n + b.doc_count, 0);
  return (
    <figure class="histogram-figure">
      <div
        ref={box}
        class="histogram"
        data-testid="histogram"
        role="img"
        aria-label={`Records over time: ${total} in ${buckets.length} buckets. Drag across it or click a bar to narrow the time range.`}
      />
      {!buckets.length && <p class="muted">No records with a time to chart.</p>}
    </figure>
  );
}
