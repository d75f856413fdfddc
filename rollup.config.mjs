// Builds dist/: the library as ESM and CJS, the CLI, and one bundled .d.ts.
// apache-arrow is a peer dependency and stays external.
import { existsSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import swc from '@rollup/plugin-swc';
import { dts } from 'rollup-plugin-dts';

// Sources import each other as './x.js' (what tsc and Node want); map that to ./x.ts.
// Also used by scripts/fuzz/rollup.config.mjs.
export const tsResolve = {
  name: 'ts-resolve',
  resolveId(source, importer) {
    if (!importer || !source.startsWith('.') || !source.endsWith('.js')) return null;
    const ts = resolvePath(dirname(importer), source.replace(/\.js$/, '.ts'));
    return existsSync(ts) ? ts : null;
  },
};

const external = (id) => id === 'apache-arrow' || id.startsWith('apache-arrow/') || id === 'arrow-js-ffi' || id.startsWith('node:');
const out = process.env.ACD_DIST ?? 'dist';
const swcPlugin = swc({ swc: { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, sourceMaps: true } });

export default [
  {
    input: 'ts/index.ts',
    external,
    plugins: [tsResolve, swcPlugin],
    output: [
      { file: `${out}/index.mjs`, format: 'es', sourcemap: true },
      { file: `${out}/index.cjs`, format: 'cjs', sourcemap: true, exports: 'named' },
    ],
  },
  {
    input: 'ts/cli/cli.ts',
    external,
    // The CLI uses the library bundle (dist/index.mjs) instead of a second copy of it.
    plugins: [{
      name: 'cli-uses-dist',
      resolveId: (s, importer) => (importer && s.startsWith('.') && resolvePath(dirname(importer), s) === resolvePath('ts/index.js')
        ? { id: './index.mjs', external: true } : null),
    }, tsResolve, swcPlugin],
    output: { file: `${out}/cli.mjs`, format: 'es', sourcemap: true },
  },
  {
    input: 'build/types/index.d.ts',
    external,
    plugins: [dts()],
    output: { file: `${out}/index.d.ts`, format: 'es' },
  },
];
