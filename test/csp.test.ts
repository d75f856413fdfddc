// The library under a strict Content-Security-Policy (issue 15, CSP-safe):
// a page served with `script-src 'self' 'wasm-unsafe-eval'` (no
// 'unsafe-eval', no inline script) runs test/csp/page.mjs, bundled by esbuild
// as a user's page would be (from 'arrow-c-device' through package.json
// "exports", apache-arrow's browser build), in Debian's Chromium through
// playwright-core: load, batches of several types both ways, a device batch,
// a stream, a run-end encoded array converted by apache-arrow's builders, a
// foreign module (addFunction, the trampoline module compiled at run time),
// the inspector (arrow-c-device/inspect: the demo table, the samples' struct
// trees) and a refused import. No `securitypolicyviolation` event, page error or
// console error may occur. A control page that calls new Function under the
// same policy must report a violation, so that the listener is known to see
// one. (Built without -sDYNAMIC_EXECUTION=0, embind's new Function makes this
// test fail at load.)
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';

process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
const { chromium } = require('playwright-core') as typeof import('playwright-core');

const ROOT = join(__dirname, '..');
const CHROMIUM = '/usr/bin/chromium';
const POLICY = "script-src 'self' 'wasm-unsafe-eval'";
const CONTROL = "try { new Function('return 1')(); } catch (e) { console.log('refused: ' + e.message); }\nwindow.__csp = { ok: true, steps: ['control'], failures: [] };\n";

let dir: string;
let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.mjs'))) throw new Error('dist/ is missing: run ./build.sh (npm test does) first');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/test-setup.sh (apt-get install chromium)`);
  dir = mkdtempSync(join(tmpdir(), 'acd-csp-'));
  const esbuild = spawnSync(join(ROOT, 'node_modules', '.bin', 'esbuild'), [
    'test/csp/page.mjs', '--bundle', '--format=esm', '--platform=browser', '--target=es2022', '--minify',
    `--outfile=${join(dir, 'page.js')}`, '--log-level=error',
  ], { cwd: ROOT, encoding: 'utf8' });
  if (esbuild.status !== 0) throw new Error(`esbuild failed: ${esbuild.stderr}`);
  const files: Record<string, [string, string]> = {
    '/': ['text/html; charset=utf-8', '<!doctype html><meta charset="utf-8"><title>csp</title><script type="module" src="/page.js"></script>'],
    '/control': ['text/html; charset=utf-8', '<!doctype html><meta charset="utf-8"><title>control</title><script src="/control.js"></script>'],
    '/page.js': ['text/javascript; charset=utf-8', readFileSync(join(dir, 'page.js'), 'utf8')],
    '/control.js': ['text/javascript; charset=utf-8', CONTROL],
  };
  server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (file === undefined) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'Content-Type': file[0], 'Content-Security-Policy': POLICY, 'Cache-Control': 'no-store' }).end(file[1]);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true, timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Opens a page and gathers what it reports: its result, CSP violations, page errors and console errors. */
async function visit(path: string): Promise<{ result: { ok: boolean; steps: string[]; failures: string[] }; violations: string[]; errors: string[] }> {
  const context = await browser.newContext();
  const errors: string[] = [];
  try {
    await context.route('**', (route) => (route.request().url().startsWith(`${origin}/`) ? route.continue() : route.abort()));
    // Registered before any of the page's scripts (and not subject to its policy).
    await context.addInitScript(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective}: ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`));
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
    await page.goto(`${origin}${path}`);
    await page.waitForFunction(() => (window as unknown as { __csp?: unknown }).__csp !== undefined, null, { timeout: 60_000 });
    // Violation events are dispatched asynchronously: let them arrive.
    await page.waitForTimeout(200);
    const result = await page.evaluate(() => (window as unknown as { __csp: { ok: boolean; steps: string[]; failures: string[] } }).__csp);
    const violations = await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);
    return { result, violations, errors };
  } finally {
    await context.close();
  }
}

test('the control page: new Function under the policy is reported as a violation', async () => {
  const { violations } = await visit('/control');
  expect(violations.length).toBeGreaterThan(0);
  expect(violations[0]).toMatch(/^script-src: eval/);
}, 60_000);

test("the library's workload under script-src 'self' 'wasm-unsafe-eval': every step, no violation, no error", async () => {
  const { result, violations, errors } = await visit('/');
  expect({ violations, errors, failures: result.failures }).toEqual({ violations: [], errors: [], failures: [] });
  expect(result.steps).toEqual([
    'load', 'export and import a batch of 8 types (copy)', 'export and import a batch of 8 types (view)', 'device batch',
    'a stream of two batches', 'run-end encoded, imported with convert',
    'into another core and back (foreign module: addFunction, trampoline)',
    'the inspector: the demo table and the samples, their struct trees in both layouts', 'a refused import is an ArrowCDeviceError',
  ]);
  expect(result.ok).toBe(true);
}, 90_000);
