import { statfsSync } from 'node:fs';
import { DiskFull } from './errors.js';

const GiB = 2 ** 30;
/** Default floor: the smaller of these, so that a small disk is not refused at once. */
const DEFAULT_FLOOR_BYTES = GiB;
const DEFAULT_FLOOR_PERCENT = 5;
/** statfs is a system call: a batch of 2,000 records asks at most once a second… */
const CACHE_MS = 1000;
/** …unless free space is within this much of the floor. */
const NEAR_BYTES = 256 * 2 ** 20;

export interface FloorOptions {
  /** free bytes to keep (`SVC_MIN_FREE_BYTES`, see config.ts) */
  minFreeBytes?: number;
  /** free share of the filesystem to keep, in percent (`SVC_MIN_FREE_PERCENT`) */
  minFreePercent?: number;
}

/** "512m", "1G", "1048576" → bytes; undefined when unset or not a size. */
export function parseBytes(text: string | undefined): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(text ?? '');
  if (!m) return undefined;
  return Math.floor(Number(m[1]) * 1024 ** ' kmgt'.indexOf(m[2].toLowerCase() || ' '));
}

/**
 * The free-space floor of a data dir's filesystem. Ingest refuses with DiskFull (507) once free
 * space is below it, so that the disk never fills: the records already accepted, the run and job
 * state that say what happened, index snapshots and searches still have room.
 *
 * The floor is `minFreeBytes` when only it is set, `minFreePercent` of the filesystem when only it
 * is set, the smaller of the two when both are, and else the smaller of 1 GiB and 5%. 0 turns it
 * off. Both are read at each measure: the options object may change while the engine runs.
 */
export class FreeSpace {
  private seen: { at: number; free: number; floor: number } | null = null;

  constructor(private readonly dir: string, private readonly opts: FloorOptions = {}) {}

  /**
   * Free bytes and the floor: measured at most once a second while free space is well above the
   * floor, at every call once it comes near (a second of ingest can write megabytes), and now
   * when `fresh`.
   */
  measure(fresh = false): { free: number; floor: number } {
    const at = Date.now();
    const seen = this.seen;
    if (!fresh && seen && at - seen.at < CACHE_MS && seen.free - seen.floor > NEAR_BYTES) return seen;
    try {
      const fs = statfsSync(this.dir);
      // bavail: what an unprivileged process may still use (root's reserve left out)
      this.seen = { at, free: fs.bavail * fs.bsize, floor: this.floor(fs.blocks * fs.bsize) };
    } catch {
      this.seen = { at, free: Infinity, floor: 0 }; // a filesystem that cannot say: the writes themselves will tell
    }
    return this.seen;
  }

  ok(): boolean {
    const { free, floor } = this.measure();
    return free >= floor;
  }

  /** Refuses with DiskFull when free space is below the floor. */
  check(what: string): void {
    const { free, floor } = this.measure();
    if (free < floor) {
      throw new DiskFull(`the disk is nearly full: ${mib(free)} free, below the ${mib(floor)} svc keeps free; ${what} refused until space is freed`);
    }
  }

  private floor(total: number): number {
    const { minFreeBytes: bytes, minFreePercent: percent } = this.opts;
    const ofTotal = (p: number) => Math.floor((total * p) / 100);
    if (bytes !== undefined && percent !== undefined) return Math.min(bytes, ofTotal(percent));
    if (bytes !== undefined) return bytes;
    if (percent !== undefined) return ofTotal(percent);
    return Math.min(DEFAULT_FLOOR_BYTES, ofTotal(DEFAULT_FLOOR_PERCENT));
  }
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
