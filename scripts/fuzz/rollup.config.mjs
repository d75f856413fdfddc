// Bundles the struct-mutation fuzzer (ts/fuzz/) into build/fuzz/fuzz.mjs for
// the command line (scripts/fuzz/fuzz.sh); apache-arrow and fzstd stay external.
import swc from '@rollup/plugin-swc';
import { tsResolve } from '../../rollup.config.mjs';

export default {
  input: 'scripts/fuzz/entry.ts',
  external: (id) => id === 'apache-arrow' || id.startsWith('apache-arrow/') || id === 'fzstd' || id.startsWith('node:'),
  plugins: [tsResolve, swc({ swc: { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } } })],
  output: { file: 'build/fuzz/fuzz.mjs', format: 'es' },
};
