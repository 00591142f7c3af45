import cliProgress from 'cli-progress';

/** A progress bar on stderr, only when stderr is a terminal; otherwise every call does nothing. */
export function progressBar(total: number) {
  if (!process.stderr.isTTY) return { bytes: (_n: number) => {}, records: (_n: number) => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: ' {bar} {percentage}% | {value}/{total} bytes | {records} records', stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total || 1, 0, { records: 0 });
  return {
    bytes: (n: number) => bar.update(Math.min(n, total || 1)),
    records: (n: number) => bar.update({ records: n }),
    stop: () => bar.stop(),
  };
}

/** Passes chunks through, reporting the running byte count. */
export async function* counted(input: AsyncIterable<Buffer>, report: (bytes: number) => void): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of input) {
    bytes += chunk.length;
    report(bytes);
    yield chunk;
  }
}

/** One status line on stderr, rewritten in place, only when stderr is a terminal (a wait with no known total). */
export function statusLine() {
  if (!process.stderr.isTTY) return { update: (_text: string) => {}, stop: () => {} };
  let shown = false;
  return {
    update: (text: string) => {
      process.stderr.write(`\r\x1b[K${text}`);
      shown = true;
    },
    stop: () => {
      if (shown) process.stderr.write('\r\x1b[K');
      shown = false;
    },
  };
}
