// Builds dist/: the library's entries (the main one and its subpaths,
// package.json "exports") as ESM that share their code through dist/chunks/
// (one copy of the wasm core for all of them), a CommonJS file per entry that
// is the ES module through require(esm), the CLI and the playground in the
// same graph (so they share those chunks too), the declarations (.d.ts for
// import, .d.cts for require), and apache-arrow's browser build for the
// playground's page. apache-arrow is a peer dependency and stays external;
// the playground's page maps it to dist/playground/apache-arrow.mjs with an
// import map, so that it needs no network.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import swc from '@rollup/plugin-swc';
import { minify } from '@swc/core';
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

/** The package's entries: package.json "exports" maps "." to index and "./NAME" to each other one. */
export const ENTRIES = ['index', 'ipc', 'json', 'integration', 'roundtrip', 'inspect', 'fixtures'];

const external = (id) => id === 'apache-arrow' || id.startsWith('apache-arrow/') || id === 'arrow-js-ffi' || id === 'fzstd' || id.startsWith('node:');
const out = process.env.ACD_DIST ?? 'dist';
const swcPlugin = swc({ swc: { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } } });

// Minified without renaming anything: names stay as written (stack traces,
// class names), comments and whitespace go (the sources' comments made up
// half of the package). No source maps are shipped (see package.json
// "files"): a map of the unminified output was 740 KB per format.
const minifyPlugin = (mangle = false) => ({
  name: 'swc-minify',
  async renderChunk(code) {
    const result = await minify(code, {
      module: true, ecma: 2022, mangle,
      compress: { keep_classnames: !mangle, keep_fnames: !mangle },
      format: { comments: false },
    });
    return { code: result.code, map: null };
  },
});

// One CommonJS file per entry: the ES module itself, loaded by require(esm)
// (Node >= 20.19, Bun; bundlers read the ES module), so that both formats
// share one copy of the core and one module state.
const cjsWrappers = {
  name: 'cjs-wrappers',
  generateBundle() {
    for (const name of ENTRIES) {
      this.emitFile({
        type: 'asset', fileName: `${name}.cjs`,
        source: `// arrow-c-device${name === 'index' ? '' : `/${name}`} for require(): the ES module ./${name}.mjs (require(esm), Node >= 20.19).\n'use strict';\nmodule.exports = require('./${name}.mjs');\n`,
      });
    }
  },
};

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
// The page and its style sheet, copied next to its bundle.
const playgroundAssets = {
  name: 'playground-assets',
  generateBundle() {
    for (const fileName of ['index.html', 'playground.css']) {
      this.emitFile({ type: 'asset', fileName: `playground/${fileName}`, source: readFileSync(`ts/playground/${fileName}`) });
    }
  },
};

const types = (ext) => ({
  input: Object.fromEntries(ENTRIES.map((n) => [n, `build/types/${n}.d.ts`])),
  external,
  plugins: [dts()],
  // The chunks' names end in ".d": a chunk "x.d" is written as x.d.d.ts and
  // imported as './x.d.js', which TypeScript resolves to it.
  output: { dir: out, format: 'es', entryFileNames: `[name].${ext}`, chunkFileNames: `types/[name].${ext}` },
});

export default [
  {
    input: {
      ...Object.fromEntries(ENTRIES.map((n) => [n, `ts/${n}.ts`])),
      cli: 'ts/cli/cli.ts',
      'playground/playground': 'ts/playground/main.ts',
    },
    external,
    plugins: [tsResolve, swcPlugin, minifyPlugin(), cjsWrappers, playgroundAssets],
    output: { dir: out, format: 'es', entryFileNames: '[name].mjs', chunkFileNames: 'chunks/[name]-[hash].mjs', sourcemap: false },
  },
  {
    // apache-arrow and fzstd (the IPC reader's ZSTD decoder) for the page's
    // import map; their own names may be shortened: only the page uses these copies.
    input: { 'playground/apache-arrow': 'apache-arrow', 'playground/fzstd': 'fzstd' },
    plugins: [browserResolve, minifyPlugin(true)],
    output: { dir: out, format: 'es', entryFileNames: '[name].mjs', chunkFileNames: 'playground/[name]-[hash].mjs', sourcemap: false },
  },
  types('d.ts'),
  types('d.cts'),
];
