// The npm registry reachable from svc's build machines lacks the prebuilt packages of other
// platforms (darwin, win32, linux-arm), so `npm install` leaves them out of package-lock.json and
// `npm ci` then refuses the lock. This records each such optional dependency in the lock with its
// os and cpu, which is all `npm ci` needs to skip it. Run it after `npm install` changes the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const added = [];
for (const entry of Object.values(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    const m = /-(darwin|linux|win32|freebsd|android)-(arm64|x64|arm|ia32)(?:-(musl|gnu))?$/.exec(dep);
    if (lock.packages[key] || !m) continue;
    lock.packages[key] = { version, cpu: [m[2]], os: [m[1]], ...(m[3] ? { libc: [m[3]] } : {}), optional: true };
    added.push(dep);
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
console.log(added.length ? `recorded ${added.join(', ')}` : 'lock already complete');
