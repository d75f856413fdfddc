// The packages the bench compares with but does not need: optional peer
// dependencies (package.json peerDependenciesMeta), imported when the bench
// starts. One that cannot be imported is skipped with a note (ts/bench/index.ts).
// ACD_BENCH_WITHOUT=arrow-js-ffi (comma-separated names) makes the import
// fail as if the package were absent: a test hook, used by test/bench.test.ts.

export type OptionalPackage = 'arrow-js-ffi';

export const WITHOUT_ENV = 'ACD_BENCH_WITHOUT';

/** The package's module; throws when it cannot be imported or ACD_BENCH_WITHOUT names it. */
export async function importOptional(name: OptionalPackage): Promise<unknown> {
  const without = (process.env[WITHOUT_ENV] ?? '').split(',').map((s) => s.trim());
  if (without.includes(name)) throw new Error(`left out by ${WITHOUT_ENV}=${process.env[WITHOUT_ENV]}`);
  // A literal specifier per package, so that bundlers see it (and keep it external).
  switch (name) {
    case 'arrow-js-ffi': return import('arrow-js-ffi');
  }
}
