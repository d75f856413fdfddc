// Headless Chromium smoke test of the built dist/: serves the project folder
// on 127.0.0.1 (random port), opens a page whose module script imports
// dist/index.mjs and apache-arrow's browser ESM build through an import map,
// runs smoke() from ./smoke.mjs and prints one line. Exit code 0 on success.
//   node test/runtimes/browser.mjs
// Uses Debian's /usr/bin/chromium through playwright-core; nothing downloads
// a browser, and every request not to the local server is aborted.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
const { chromium } = await import('playwright-core');

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const TIMEOUT_MS = 60_000;

const TYPES = {
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8',
};

// apache-arrow's browser ESM build imports these bare specifiers; map each to
// the ESM file its package exports.
const IMPORT_MAP = {
  imports: {
    'apache-arrow': '/node_modules/apache-arrow/Arrow.dom.mjs',
    flatbuffers: '/node_modules/flatbuffers/mjs/flatbuffers.js',
    tslib: '/node_modules/tslib/tslib.es6.mjs',
    'json-with-bigint': '/node_modules/json-with-bigint/json-with-bigint.js',
    fzstd: '/node_modules/fzstd/esm/index.mjs',
  },
};

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>arrow-c-device smoke</title>
<script type="importmap">${JSON.stringify(IMPORT_MAP)}</script>
<script type="module">
  try {
    const arrow = await import('apache-arrow');
    const { load } = await import('/dist/index.mjs');
    const { smoke } = await import('/test/runtimes/smoke.mjs');
    window.__smoke = await smoke(arrow, load);
  } catch (e) {
    window.__smoke = { ok: false, details: 'the page failed: ' + ((e && e.stack) || e) };
  }
</script>
`;

function serve(req, res) {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (url.pathname === '/' || url.pathname === '/smoke.html') {
    res.writeHead(200, { 'Content-Type': TYPES['.html'], 'Cache-Control': 'no-store' });
    res.end(PAGE);
    return;
  }
  const file = resolve(join(ROOT, decodeURIComponent(url.pathname)));
  if (!file.startsWith(ROOT + sep) || !existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end(`not found: ${url.pathname}\n`);
    return;
  }
  res.writeHead(200, {
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
    'Cache-Control': 'no-store',
  });
  createReadStream(file).pipe(res);
}

function timeout(ms, what) {
  let timer;
  const promise = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms / 1000} s`)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

async function run() {
  const log = [];
  if (!existsSync(join(ROOT, 'dist', 'index.mjs'))) {
    return { ok: false, details: `${join(ROOT, 'dist', 'index.mjs')} is missing: run ./build.sh first` };
  }
  if (!existsSync(CHROMIUM)) {
    return { ok: false, details: `${CHROMIUM} is missing: run scripts/test-setup.sh (apt-get install chromium)` };
  }
  const server = createServer(serve);
  let browser = null;
  const limit = timeout(TIMEOUT_MS, 'the browser smoke test');
  try {
    await new Promise((ok, fail) => { server.once('error', fail); server.listen(0, '127.0.0.1', ok); });
    const origin = `http://127.0.0.1:${server.address().port}`;
    const work = (async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        timeout: 30_000,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
          '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
          '--disable-dev-shm-usage'],
      });
      const context = await browser.newContext();
      await context.route((url) => !url.href.startsWith(`${origin}/`), (route) => {
        log.push(`blocked ${route.request().url()}`);
        return route.abort();
      });
      const page = await context.newPage();
      page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') log.push(`console.${m.type()}: ${m.text()}`); });
      page.on('response', (r) => { if (r.status() >= 400) log.push(`HTTP ${r.status()} ${r.url()}`); });
      page.on('requestfailed', (r) => log.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
      await page.goto(`${origin}/smoke.html`, { waitUntil: 'load' });
      await page.waitForFunction(() => window.__smoke !== undefined, null, { timeout: TIMEOUT_MS - 5_000, polling: 100 });
      const result = await page.evaluate(() => window.__smoke);
      const version = browser.version();
      return { ...result, version };
    })();
    const result = await Promise.race([work, limit.promise]);
    if (!result.ok && log.length) result.details += `\n  browser log:\n    ${log.join('\n    ')}`;
    return result;
  } catch (e) {
    return { ok: false, details: `${e?.stack ?? e}${log.length ? `\n  browser log:\n    ${log.join('\n    ')}` : ''}` };
  } finally {
    limit.cancel();
    if (browser) await browser.close().catch(() => {});
    await new Promise((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  }
}

// A last resort if closing hangs: the launched browser dies with this process.
const hard = setTimeout(() => {
  console.log(`chromium: FAIL did not finish within ${TIMEOUT_MS / 1000 + 15} s`);
  process.exit(1);
}, TIMEOUT_MS + 15_000);
hard.unref();

const result = await run();
console.log(`chromium${result.version ? ` ${result.version}` : ''}: ${result.ok ? 'ok' : 'FAIL'} ${result.details}`);
process.exitCode = result.ok ? 0 : 1;
