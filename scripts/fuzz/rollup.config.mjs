// Bundles the struct-mutation fuzzer (ts/fuzz/) into build/fuzz/fuzz.mjs for
// the command line (scripts/fuzz/fuzz.sh); apache-arrow stays external.
import { existsSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import swc from '@rollup/plugin-swc';

const tsResolve = {
  name: 'ts-resolve',
  resolveId(source, importer) {
    if (!importer || !source.startsWith('.') || !source.endsWith('.js')) return null;
    const ts = resolvePath(dirname(importer), source.replace(/\.js$/, '.ts'));
    return existsSync(ts) ? ts : null;
  },
};

export default {
  input: 'scripts/fuzz/entry.ts',
  external: (id) => id === 'apache-arrow' || id.startsWith('apache-arrow/') || id.startsWith('node:'),
  plugins: [tsResolve, swc({ swc: { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } } })],
  output: { file: 'build/fuzz/fuzz.mjs', format: 'es' },
};
