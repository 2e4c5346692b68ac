/** The command-line flags the benchmark scripts share: `--name value`. */
export function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** A flag's value as an integer >= 1, or `fallback` when the flag is absent. */
export function count(name: string, fallback: number): number {
  const value = Number(flag(name) ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be an integer >= 1 (got ${flag(name)})`);
  return value;
}
