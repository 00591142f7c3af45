/** One file the executable carries: its size and SHA-256, taken when the executable was built. */
export interface SeaAsset {
  size: number;
  sha256: string;
  /** assets that must be unpacked beside this one first (libduckdb.so for duckdb.node; a worker's addons) */
  needs?: string[];
}

/** What the single executable carries, written into it when it is built. */
export interface SeaManifest {
  version: string;
  /** a hash of every asset's hash: names the cache dir, so a file found there of the right size is trusted */
  build: string;
  assets: Record<string, SeaAsset>;
}

declare const __SVC_SEA_MANIFEST__: SeaManifest | undefined;

/** The manifest built into this executable (scripts/build-binary.mjs defines it). */
export function seaManifest(): SeaManifest {
  if (typeof __SVC_SEA_MANIFEST__ === 'undefined') throw new Error('svc: this build carries no assets');
  return __SVC_SEA_MANIFEST__;
}
