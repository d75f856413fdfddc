// Builds dist/: the library as ESM and CJS, the CLI, and one bundled .d.ts.
// apache-arrow is a peer dependency and stays external, except in the
// playground (dist/playground/), a static page that bundles everything it
// runs (apache-arrow, the core with its wasm inside) so that it needs no network.
import { existsSync, readFileSync } from 'node:fs';
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

const external = (id) => id === 'apache-arrow' || id.startsWith('apache-arrow/') || id === 'arrow-js-ffi' || id === 'fzstd' || id.startsWith('node:');
const out = process.env.ACD_DIST ?? 'dist';
const swcPlugin = swc({ swc: { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, sourceMaps: true } });

// The browser builds of apache-arrow and of what it imports (as test/runtimes/browser.mjs's import map).
const BROWSER_MODULES = {
  'apache-arrow': 'node_modules/apache-arrow/Arrow.dom.mjs',
  flatbuffers: 'node_modules/flatbuffers/mjs/flatbuffers.js',
  tslib: 'node_modules/tslib/tslib.es6.mjs',
  'json-with-bigint': 'node_modules/json-with-bigint/json-with-bigint.js',
  fzstd: 'node_modules/fzstd/esm/index.mjs',
};
const browserResolve = {
  name: 'browser-resolve',
  resolveId: (source) => (source in BROWSER_MODULES ? resolvePath(BROWSER_MODULES[source]) : null),
};
// The page and its style sheet, copied next to the bundle.
const playgroundAssets = {
  name: 'playground-assets',
  generateBundle() {
    for (const fileName of ['index.html', 'playground.css']) {
      this.emitFile({ type: 'asset', fileName, source: readFileSync(`ts/playground/${fileName}`) });
    }
  },
};

export default [
  {
    input: 'ts/index.ts',
    external,
    plugins: [tsResolve, swcPlugin],
    output: [
      { file: `${out}/index.mjs`, format: 'es', sourcemap: true, sourcemapExcludeSources: true },
      { file: `${out}/index.cjs`, format: 'cjs', sourcemap: true, sourcemapExcludeSources: true, exports: 'named' },
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
    output: { file: `${out}/cli.mjs`, format: 'es', sourcemap: true, sourcemapExcludeSources: true },
  },
  {
    input: 'ts/playground/main.ts',
    plugins: [browserResolve, tsResolve, swcPlugin, playgroundAssets],
    output: { dir: `${out}/playground`, entryFileNames: 'playground.mjs', format: 'es', sourcemap: false },
  },
  {
    input: 'build/types/index.d.ts',
    external,
    plugins: [dts()],
    output: { file: `${out}/index.d.ts`, format: 'es' },
  },
];
