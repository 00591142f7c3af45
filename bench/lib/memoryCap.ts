import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A memory cgroup (v2, or v1's memory controller) that one process is moved into, as root: the
 * kernel then keeps the process's resident memory under `mib` by taking back clean file pages
 * (the store's mapped pages, the page cache of files written), as a container's limit would.
 */
export class MemoryCap {
  private readonly dir: string;
  private readonly v2: boolean;

  constructor(readonly mib: number) {
    this.v2 = existsSync('/sys/fs/cgroup/cgroup.controllers') && readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8').includes('memory');
    this.dir = join(this.v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory', `svc-bench-${process.pid}`);
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(join(this.dir, this.v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(mib * 2 ** 20));
  }

  add(pid: number): void {
    writeFileSync(join(this.dir, 'cgroup.procs'), String(pid));
  }

  /** The most the group was charged (its processes' memory and the page cache they brought in), MiB. */
  peakMiB(): number {
    return Number(readFileSync(join(this.dir, this.v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'), 'utf8')) / 2 ** 20;
  }

  /** Removes the group once its processes have exited. */
  remove(): void {
    rmdirSync(this.dir);
  }
}
