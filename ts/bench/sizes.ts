// The size of what a user downloads: the wasm core (embedded as base64 in
// the bundle), the Emscripten glue, and the whole main entry as built
// (dist/index.mjs and the chunks of dist/chunks/ it imports), raw and gzipped.
// What a user's bundle of each entry weighs is ./bundles.ts.

import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface Size {
  raw: number;
  gzip: number;
}

export interface Sizes {
  /** The wasm binary (decoded from the bundle). */
  wasm: Size;
  /** Emscripten's JS glue alone (build/core/core.mjs without the embedded wasm); null outside a checkout. */
  glue: Size | null;
  /** The JS of the main entry (dist/index.mjs and its chunks) without the embedded wasm: glue and TypeScript facade. */
  js: Size;
  /** The main entry as shipped: the JS and the wasm as base64. */
  bundle: Size;
  /** Where the figures were read. */
  files: { bundle: string; glue: string | null };
}

const WASM_BASE64 = /AGFzbQ[A-Za-z0-9+/]*={0,2}/; // "\0asm" in base64, to the end of the string

/**
 * Finds this package's dist/index.mjs, from the running CLI or the working
 * directory; null when not built. The CLI's path is resolved through symbolic
 * links: an installed package runs it as node_modules/.bin/arrow-c-device.
 */
export function findBundle(): string | null {
  const main = process.argv[1] ? realpath(resolve(process.argv[1])) : '';
  const roots = [main === '' ? '' : join(dirname(main), '..'), process.cwd()];
  for (const root of roots) {
    if (root === '' || !existsSync(join(root, 'package.json'))) continue;
    const name = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: string }).name;
    if (name === 'arrow-c-device' && existsSync(join(root, 'dist', 'index.mjs'))) return join(root, 'dist', 'index.mjs');
  }
  return null;
}

/** Measures the built files; throws with what to do when the bundle is missing. */
export function measureSizes(bundlePath = findBundle()): Sizes {
  if (bundlePath === null) throw new Error('dist/index.mjs not found (run ./build.sh first, from the package folder)');
  const bundle = withImports(bundlePath).map((f) => readFileSync(f, 'utf8')).join('\n');
  const base64 = WASM_BASE64.exec(bundle)?.[0];
  if (base64 === undefined) throw new Error(`${bundlePath}: no embedded wasm binary found`);
  const wasm = Buffer.from(base64, 'base64');
  const gluePath = join(dirname(bundlePath), '..', 'build', 'core', 'core.mjs');
  const glue = existsSync(gluePath) ? readFileSync(gluePath, 'utf8').replace(WASM_BASE64, '') : null;
  return {
    wasm: size(wasm),
    glue: glue === null ? null : size(Buffer.from(glue)),
    js: size(Buffer.from(bundle.replace(WASM_BASE64, ''))),
    bundle: size(Buffer.from(bundle)),
    files: { bundle: bundlePath, glue: glue === null ? null : gluePath },
  };
}

/** A built ES module and every file of dist/ it imports, directly or not. */
function withImports(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*["'](\.\.?\/[^"']+)["']/g)) visit(join(dirname(file), m[1]!));
  };
  visit(entry);
  return [...seen];
}

function realpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function size(bytes: Uint8Array): Size {
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}
