/** Loads a native addon from a file, as `require()` of a `.node` file would. */
export function loadAddon(file: string): unknown {
  const module = { exports: {} as unknown };
  process.dlopen(module, file);
  return module.exports;
}
