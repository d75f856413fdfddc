// The playground (ts/playground/) as a learner uses it: served by
// `arrow-c-device playground --port 0`, driven in Debian's Chromium through
// playwright-core (no browser is downloaded; every request off localhost is
// aborted and recorded). Every panel is exercised (Data, Structs, Memory,
// the layout switch, Lifecycle, Break it, Devices, Streams, Share); the Structs panel is
// checked field by field against the bytes of the page's core and against
// the Node-side tree of the same sample; screenshots of each panel at
// 1280×800 and 1920×1080 go to build/screenshots/ on every run.
// Longer than 400 lines: one browser page walks every panel in order (each
// test starts from the page state the previous one left), so they share a file.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import * as arrow from 'apache-arrow';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ArrowCDevice } from '../ts/api.js';
import { batchTree } from '../ts/inspect/batch.js';
import { sample, samples } from '../ts/inspect/samples.js';
import type { StructTree, TreeNode } from '../ts/inspect/tree.js';
import { recordBatchField } from '../ts/model/types.js';

process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
const { chromium } = require('playwright-core') as typeof import('playwright-core');

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = 'build/screenshots';
const SIZES = [[1280, 800], [1920, 1080]] as const;

let server: ChildProcess;
let origin: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let acd: ArrowCDevice;
const blocked: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync('dist/playground/index.html')) throw new Error('dist/playground/ is missing: run ./build.sh (npm test does) first');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/test-setup.sh (apt-get install chromium)`);
  mkdirSync(SHOTS, { recursive: true });
  acd = await ArrowCDevice.load();
  server = spawn(process.execPath, ['bin/arrow-c-device.mjs', 'playground', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const first = await new Promise<string>((ok, fail) => {
    let out = '';
    server.stdout!.on('data', (d) => { out += String(d); if (out.includes('\n')) ok(out.split('\n')[0]!); });
    server.once('exit', (code) => fail(new Error(`the playground server exited with ${code}`)));
  });
  expect(first).toMatch(/^playground: http:\/\/127\.0\.0\.1:\d+\/ \(Ctrl-C to stop\)$/);
  origin = /http:\/\/127\.0\.0\.1:\d+/.exec(first)![0];
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true, timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.route('**', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  page = await open('');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.kill('SIGINT');
});

async function open(hash: string): Promise<Page> {
  const p = await context.newPage();
  p.on('pageerror', (e) => pageErrors.push(e.message));
  await p.goto(`${origin}/${hash}`);
  await p.waitForFunction(() => (window as unknown as { __playground?: { ready: boolean } }).__playground !== undefined, null, { timeout: 30_000 });
  expect(await p.evaluate(() => (window as unknown as { __playground: { ready: boolean; error?: string } }).__playground)).toMatchObject({ ready: true });
  return p;
}

const tab = (p: Page, name: string) => p.click(`.tabs button[data-tab="${name}"]`);

async function shoot(p: Page, panel: string): Promise<void> {
  const size = p.viewportSize()!;
  await p.screenshot({ path: `${SHOTS}/playground-${panel}-${size.width}x${size.height}.png` });
}

interface DomNode {
  id: string; struct: string; address: number;
  fields: { name: string; offset: number; size: number; kind: string; value: string; meaning: string }[];
  buffers: { id: string; address: number; size: string; role: string; first: string }[];
}

/** The Structs panel as the data- attributes of its rows say. */
function domTree(p: Page): Promise<DomNode[]> {
  return p.$$eval('#tree [data-node]', (nodes) => nodes.map((n) => ({
    id: n.getAttribute('data-node')!, struct: n.getAttribute('data-struct')!, address: Number(n.getAttribute('data-address')),
    fields: [...n.querySelectorAll(':scope > table.fields tr')].map((r) => ({
      name: r.getAttribute('data-field')!, offset: Number(r.getAttribute('data-offset')), size: Number(r.getAttribute('data-size')),
      kind: r.getAttribute('data-kind')!, value: r.getAttribute('data-value')!, meaning: r.getAttribute('data-meaning')!,
    })),
    buffers: [...n.querySelectorAll(':scope > table.buffers tr')].map((r) => ({
      id: r.getAttribute('data-buffer')!, address: Number(r.getAttribute('data-address')), size: r.getAttribute('data-size')!,
      role: r.getAttribute('data-role')!, first: r.getAttribute('data-first')!,
    })),
  })));
}

/** A Node-side tree in the same shape (embedded structs left out, as the panel does). */
function flat(tree: StructTree): DomNode[] {
  const walk = (n: TreeNode): DomNode[] => [{
    id: n.id, struct: n.struct, address: n.address,
    fields: n.fields.filter((f) => f.kind !== 'struct').map((f) => ({ name: f.name, offset: f.offset, size: f.size, kind: f.kind, value: f.value, meaning: f.meaning ?? '' })),
    buffers: n.buffers.map((b) => ({ id: b.id, address: b.address, size: b.size === null ? '' : String(b.size), role: b.role, first: b.first ?? '' })),
  }, ...n.children.flatMap(walk)];
  return tree.roots.flatMap(walk);
}

/** The page's core's memory. */
const readPage = (p: Page, address: number, size: number) =>
  p.evaluate(([a, s]) => (window as unknown as { __playground: { read(a: number, s: number): number[] } }).__playground.read(a!, s!), [address, size]);
const pg = <T>(p: Page, expr: string): Promise<T> => p.evaluate(`window.__playground.${expr}`) as Promise<T>;

/** A field's bytes as the panel shows its value: an integer in decimal, a pointer in hex or NULL. */
function decode(bytes: number[], kind: string): string {
  const v = new DataView(Uint8Array.from(bytes).buffer);
  if (kind === 'i64x3') return [0, 8, 16].map((o) => v.getBigInt64(o, true)).join(', ');
  if (kind === 'i64') return v.getBigInt64(0, true).toString();
  if (kind === 'i32') return String(v.getInt32(0, true));
  const n = v.getUint32(0, true);
  return n === 0 ? 'NULL' : `0x${n.toString(16).padStart(8, '0')}`;
}

describe('playground', () => {
  test('the server serves its files with their types, and nothing else', async () => {
    const get = (path: string) => new Promise<{ status: number; type: string }>((ok, fail) => {
      const u = new URL(origin);
      request({ host: u.hostname, port: u.port, path }, (res) => { res.resume(); ok({ status: res.statusCode!, type: String(res.headers['content-type']) }); })
        .on('error', fail).end();
    });
    expect(await get('/')).toEqual({ status: 200, type: 'text/html; charset=utf-8' });
    expect(await get('/playground.mjs')).toEqual({ status: 200, type: 'text/javascript; charset=utf-8' });
    expect(await get('/playground.css')).toEqual({ status: 200, type: 'text/css; charset=utf-8' });
    for (const path of ['/../package.json', '/%2e%2e/%2e%2e/package.json', '/..%2f..%2fpackage.json', '/dist/index.mjs', '/etc/passwd']) {
      expect((await get(path)).status).toBe(404);
    }
    // The import map's modules: the installed packages' JavaScript files, and nothing else of them or outside them.
    const html = readFileSync('dist/playground/index.html', 'utf8');
    const mapped = Object.values((JSON.parse(/<script type="importmap">([\s\S]*?)<\/script>/.exec(html)![1]!) as { imports: Record<string, string> }).imports);
    expect(mapped.length).toBe(5);
    for (const path of mapped) expect({ path, ...(await get(path)) }).toEqual({ path, status: 200, type: 'text/javascript; charset=utf-8' });
    for (const path of ['/modules/apache-arrow/package.json', '/modules/apache-arrow/%2e%2e/%2e%2e/package.json', '/modules/apache-arrow/..%2f..%2fbin%2farrow-c-device.mjs',
      '/modules/apache-arrow/%2fetc%2fpasswd', '/modules/apache-arrow/%E0%A4%A', '/modules/apache-arrow/nothing.mjs', '/modules/lodash/index.js', '/modules/apache-arrow/']) {
      expect({ path, status: (await get(path)).status }).toEqual({ path, status: 404 });
    }
  });

  test('Data: every sample, grouped and searchable; a file chosen, a bad file dropped', async () => {
    const names = await page.$$eval('#samples button', (bs) => bs.map((b) => b.getAttribute('data-sample')));
    expect(names.sort()).toEqual(samples().map((s) => s.name).sort());
    expect(await page.$$eval('#samples h3', (hs) => hs.length)).toBeGreaterThan(5);
    await page.fill('#search', 'sliced');
    const shown = await page.$$eval('#samples button:not([hidden])', (bs) => bs.map((b) => b.getAttribute('data-sample')!));
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.every((n) => n.includes('sliced') || samples().find((s) => s.name === n)!.description.includes('sliced'))).toBe(true);
    await shoot(page, 'data');
    await page.fill('#search', '');

    const table = arrow.tableFromArrays({ n: Int32Array.from([7, 8, 9]) });
    await page.setInputFiles('#file', { name: 'three.arrow', mimeType: 'application/octet-stream', buffer: Buffer.from(arrow.tableToIPC(table, 'file')) });
    await page.waitForSelector('#source:has-text("file three.arrow")');
    expect(await page.$eval('#tree [data-node="schema.children[0]"] tr[data-field="format"]', (r) => r.getAttribute('data-meaning'))).toBe('"i"');
    expect(await page.$eval('#file-error', (e) => (e as HTMLElement).hidden)).toBe(true);

    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9])], 'junk.arrow'));
      document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await page.waitForSelector('#file-error:not([hidden])');
    const error = await page.$eval('#file-error', (e) => e.textContent!);
    expect(error).toMatch(/^junk\.arrow is not a readable Arrow IPC file, stream or integration JSON: /);
    expect(error).not.toContain('\n');
    // The file shown before stays.
    expect(await page.textContent('#source')).toContain('three.arrow');
  });

  test('Structs: the demo field by field, against the page core\'s bytes and the Node-side tree', async () => {
    await page.click('#samples button[data-sample="demo"]');
    await page.waitForSelector('#source:has-text("sample demo")');
    await tab(page, 'memory');
    const dom = await domTree(page);
    expect(dom.map((n) => n.id)).toEqual(flat((await pg<StructTree>(page, 'tree()'))).map((n) => n.id));
    let checked = 0;
    for (const n of dom) {
      for (const f of n.fields) {
        expect({ node: n.id, field: f.name, value: decode(await readPage(page, n.address + f.offset, f.size), f.kind) })
          .toEqual({ node: n.id, field: f.name, value: f.value });
        checked++;
        if ((f.name === 'format' || f.name === 'name') && f.value !== 'NULL') {
          const bytes = await readPage(page, parseInt(f.value, 16), 64);
          expect(f.meaning).toBe(JSON.stringify(Buffer.from(bytes.slice(0, bytes.indexOf(0))).toString('utf8')));
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    // Layout-independent facts equal the Node-side tree of the same sample: everything but addresses.
    const s = sample('demo');
    const node = flat(batchTree(acd, recordBatchField(s.schema), s.batch, 'wasm32').tree);
    const facts = (list: DomNode[]) => list.map((n) => ({
      id: n.id, struct: n.struct,
      fields: n.fields.map((f) => ({ ...f, value: f.kind === 'ptr' || f.kind === 'fnptr' ? f.value === 'NULL' : f.value })),
      buffers: n.buffers.map((b) => ({ ...b, address: b.address === 0 })),
    }));
    expect(facts(dom)).toEqual(facts(node));
    await shoot(page, 'structs');
  });

  test('Links and Memory: a pointer goes to its target; a field\'s bytes are highlighted; a byte names its field', async () => {
    await page.click('#tree [data-node="schema.children[3]"] > table.fields tr[data-field="dictionary"] a.link');
    const target = page.locator('#tree [data-node="schema.children[3].dictionary"]');
    await expect(target.evaluate((e) => e.classList.contains('selected'))).resolves.toBe(true);
    await expect(target.isVisible()).resolves.toBe(true);
    // A pointer to a string: its bytes in the Memory panel ("+s" and its NUL).
    await page.click('#tree [data-node="schema"] > table.fields tr[data-field="format"] a.link');
    expect(await page.$$eval('.hex .b.sel', (bs) => bs.map((b) => b.textContent).join(' '))).toBe('2b 73 00');
    // A field: its 8 bytes; clicking one says which field it is.
    await page.click('#tree [data-node="device.array.children[0]"] > table.fields tr[data-field="length"]');
    const sel = await page.$$eval('.hex .b.sel', (bs) => bs.map((b) => Number(b.getAttribute('data-a'))));
    expect(sel.length).toBe(8);
    await page.click(`.hex .b[data-a="${sel[3]}"]`);
    expect(await page.textContent('#byte-info')).toMatch(/is byte 3 of device\.array\.children\[0\] \(ArrowArray int32\): field length \(\+0, 8 bytes, 4\)/);
    // A buffer: its bytes.
    const buffer = await page.$eval('#tree tr[data-buffer="device.array.children[0].buffers[1]"]', (r) => Number(r.getAttribute('data-size')));
    await page.click('#tree tr[data-buffer="device.array.children[0].buffers[1]"]');
    expect(await page.$$eval('.hex .b.sel', (bs) => bs.length)).toBe(buffer);
    await shoot(page, 'memory');
  });

  test('Layout switch: the LP64 tree and image equal the Node-side LP64 tree', async () => {
    await page.check('input[name=layout][value=lp64]');
    await page.waitForSelector('#addresses:has-text("lp64")');
    const s = sample('demo');
    const lp64 = batchTree(acd, recordBatchField(s.schema), s.batch, 'lp64');
    expect(await domTree(page)).toEqual(flat(lp64.tree));
    expect(await page.$eval('#tree [data-node="schema"] tr[data-field="release"]', (r) => r.getAttribute('data-offset'))).toBe('56');
    // The memory view shows the image's body: the first row is its first bytes.
    const row = await page.$$eval('.hex .row:first-child .b', (bs) => bs.map((b) => b.textContent).join(''));
    const first = lp64.tree.regions[0]!.address - (lp64.tree.regions[0]!.address % 16);
    expect(row).toBe(Buffer.from(lp64.body!.slice(first, first + 16)).toString('hex'));
    expect(await page.evaluate(() => location.hash)).toContain('layout=lp64');
    await shoot(page, 'layout-lp64');
    await page.check('input[name=layout][value=wasm32]');
    await page.waitForSelector('#addresses:has-text("wasm32")');
  });

  test('Lifecycle: export, move, import (view, copy), release; released structs and live bytes back to the start', async () => {
    await tab(page, 'lifecycle');
    const start = await pg<number>(page, 'start');
    expect(await pg<number>(page, 'bytesAllocated()')).toBeGreaterThan(start);
    await page.click('button[data-act="import-view"]');
    const releases = (step: string) => page.$$eval(`.step[data-step="${step}"] tr[data-struct-id]`,
      (rs) => Object.fromEntries(rs.map((r) => [r.getAttribute('data-struct-id'), r.getAttribute('data-release')])));
    const view = await releases('import (view)');
    expect(view['schema']).toBe('NULL');
    expect(view['device']).toBe('NULL');
    expect(view['schema.children[0]']).toMatch(/^0x/);
    await page.click('button[data-act="release"]');
    expect(Object.values(await releases('release')).every((r) => r === 'freed')).toBe(true);
    expect(await page.$eval('.step[data-step="release"]', (e) => Number(e.getAttribute('data-bytes')))).toBe(start);
    expect(await pg<number>(page, 'bytesAllocated()')).toBe(start);
    expect(await page.textContent('#tree')).toContain('Nothing exported');

    await page.click('button[data-act="export"]');
    await page.click('button[data-act="import-copy"]');
    const copy = await releases('import (copy)');
    expect(copy['schema']).toBe('NULL');
    expect(copy['schema.children[0]']).toBe('freed');
    await page.click('button[data-act="release"]');
    expect(await pg<number>(page, 'bytesAllocated()')).toBe(start);

    // export → move → import: the consumer's own structs hold the moved content, then are moved again.
    await page.click('button[data-act="export"]');
    await page.click('button[data-act="move"]');
    const moved = await releases('move');
    expect([moved['schema'], moved['device']]).toEqual(['NULL', 'NULL']);
    expect(moved['schema (moved)']).toMatch(/^0x/);
    expect(moved['device (moved)']).toMatch(/^0x/);
    expect(moved['schema.children[0]']).toMatch(/^0x/);
    expect(await page.$eval('#tree [data-node="schema"] tr[data-field="release"]', (r) => r.getAttribute('data-value'))).toMatch(/^0x/);
    await page.click('button[data-act="import-copy"]');
    expect((await releases('import (copy)'))['schema (moved)']).toBe('NULL');
    await shoot(page, 'lifecycle');
    await page.click('button[data-act="release"]');
    expect(await pg<number>(page, 'bytesAllocated()')).toBe(start);
    expect(await page.evaluate(() => location.hash)).toBe('#sample=demo&layout=wasm32&steps=export;import:view;release;export;import:copy;release;export;move;import:copy;release');
    await page.click('button[data-act="export"]');
  });

  test('Break it: a broken offset is stopped at full with the validator\'s path, passes at none; restore', async () => {
    await tab(page, 'break');
    await page.selectOption('#edit-field', 'device.array.children[1]/offset');
    await page.fill('#edit-value', '1');
    await page.click('button[data-act="set"]');
    expect(await page.$eval('#tree [data-node="device.array.children[1]"] tr[data-field="offset"]', (r) => r.getAttribute('data-value'))).toBe('1');
    await page.click('button[data-try="all"]');
    const trials = await page.$$eval('.trials tr', (rs) => rs.map((r) => [r.getAttribute('data-level'), r.getAttribute('data-ok'), r.textContent]));
    expect(trials.map(([l, ok]) => [l, ok])).toEqual([['none', 'true'], ['minimal', 'true'], ['default', 'false'], ['full', 'false']]);
    expect(trials[3]![2]).toContain('error: root.children[1].buffers[1]: expected 0 <= offsets[1] (the first) <= offsets[5] (the last), found 3 and 0');
    expect(trials[0]![2]).toMatch(/passes: 4 rows; 'id': \[1, null, 3, 4\]/);
    // A format byte: refused at every level, none included.
    await page.selectOption('#edit-region', 'schema.children[0].format');
    await page.fill('#edit-index', '0');
    await page.fill('#edit-byte', '78');
    await page.click('button[data-act="set-byte"]');
    await page.click('button[data-try="none"]');
    expect(await page.textContent('.trials tr[data-level="none"]')).toContain("error: root.children[0]: format 'x': unknown format string");
    expect(await page.$$eval('ul.edits li', (ls) => ls.map((l) => l.textContent))).toEqual(['device.array.children[1].offset = 1', 'schema.children[0].format[0] = 0x78']);
    await shoot(page, 'break');
    await tab(page, 'memory');
    expect(await page.$$eval('.hex .b.edited', (bs) => bs.length)).toBeGreaterThan(0);
    await tab(page, 'break');
    const hash = await page.evaluate(() => location.hash);
    expect(hash).toContain('set:device.array.children[1]/offset=1;try:all;byte:schema.children[0].format@0=78;try:none');

    // Share: the URL restores the sample, the layout, the edits and the trials.
    const shared = await open(hash);
    await tab(shared, 'break');
    expect(await shared.$$eval('ul.edits li', (ls) => ls.length)).toBe(2);
    expect(await shared.textContent('.trials tr[data-level="none"]')).toContain("format 'x': unknown format string");
    expect(await shared.$eval('#tree [data-node="device.array.children[1]"] tr[data-field="offset"]', (r) => r.getAttribute('data-value'))).toBe('1');
    await shoot(shared, 'share');
    await shared.close();

    await page.click('button[data-act="restore"]');
    expect(await page.$eval('#tree [data-node="device.array.children[1]"] tr[data-field="offset"]', (r) => r.getAttribute('data-value'))).toBe('0');
    expect(await page.$eval('#tree [data-node="schema.children[0]"] tr[data-field="format"]', (r) => r.getAttribute('data-meaning'))).toBe('"i"');
    await page.click('button[data-try="full"]');
    expect(await page.$eval('.trials tr[data-level="full"]', (r) => r.getAttribute('data-ok'))).toBe('true');
  });

  test('Devices: the sync event, EBUSY before the wait, the wait, the copy to the host, a timeline', async () => {
    await tab(page, 'devices');
    await page.selectOption('#device', 'metal:0');
    await page.click('button[data-device-act="export"]');
    expect(await page.$eval('.device-fields tr[data-field="sync_event"]', (r) => r.textContent)).toContain('a MTLEvent*');
    expect(await page.$eval('.device-fields tr[data-field="device_type"]', (r) => r.textContent)).toContain('ARROW_DEVICE_METAL (metal:0)');
    await page.click('button[data-device-act="read"]');
    await page.click('button[data-device-act="wait"]');
    await page.click('button[data-device-act="read"]');
    await page.click('button[data-device-act="copy"]');
    await page.click('button[data-device-act="release"]');
    const steps = await page.$$eval('.timeline tr[data-device-step]', (rs) => rs.map((r) => [r.getAttribute('data-device-step'), r.getAttribute('data-ok'),
      ...[...r.querySelectorAll('td')].slice(1).map((td) => Number(td.textContent))]));
    // step, ok, ops enqueued, executed, pending, events recorded, waited, device bytes
    expect(steps.map((s) => s.slice(0, 2))).toEqual([['export onto metal:0', 'true'], ['read a buffer', 'false'], ['wait on sync_event', 'true'],
      ['read a buffer', 'true'], ['copy to the host', 'true'], ['release', 'true']]);
    const [exported, busy, waited] = steps as number[][];
    expect(exported![4]).toBeGreaterThan(0); // copies pending on the stream
    expect(exported![5]).toBe(1);
    expect(busy![4]).toBe(exported![4]);
    expect([waited![4], waited![6]]).toEqual([0, 1]);
    expect(steps[5]![7]).toBe(0);
    const notes = await page.$$eval('.timeline tr.note-row', (rs) => rs.map((r) => r.textContent!));
    expect(notes[1]).toMatch(/^EBUSY: readDeviceMemory: reading metal:0 memory at 0x[0-9a-f]+ before waiting on its sync event/);
    expect(notes[4]).toContain("'id': [1,null,3,4]");
    expect(await page.evaluate(() => location.hash)).toContain('device:export:metal:0;device:read;device:wait;device:read;device:copy;device:release');
    await page.click('button[data-device-act="export"]');
    await page.click('button[data-device-act="read"]');
    await shoot(page, 'devices');
  });

  test('Streams: get_schema, get_next to the end; a failing producer\'s code and get_last_error; the async stream\'s request(n), on_error, cancel', async () => {
    await tab(page, 'streams');
    const before = await pg<number>(page, 'bytesAllocated()');
    const steps = () => page.$$eval('.stream-steps tr', (rs) => rs.map((r) => [r.getAttribute('data-stream-step'), r.getAttribute('data-ok'), r.querySelector('td.result')!.textContent!]));
    await page.click('button[data-stream-act="export"]');
    await page.click('button[data-stream-act="import"]');
    for (let i = 0; i < 4; i++) await page.click('button[data-stream-act="next"]');
    expect(await page.isDisabled('button[data-stream-act="next"]')).toBe(true);
    let s = await steps();
    expect(s.map(([a, ok]) => `${a} ${ok}`)).toEqual(['export (3 batches) true', 'import: get_schema true', 'get_next true', 'get_next true', 'get_next true', 'get_next true']);
    expect(s[1]![2]).toContain("the producer's struct now has release = NULL");
    expect(s[4]![2]).toContain('batch 2, 4 rows');
    expect(s[5]![2]).toContain('released array (release == NULL): the end of the stream');
    await page.click('button[data-stream-act="release"]');
    expect(await pg<number>(page, 'bytesAllocated()')).toBe(before);
    await page.click('button[data-stream-act="export-failing"]');
    await page.click('button[data-stream-act="import"]');
    await page.click('button[data-stream-act="next"]');
    await page.click('button[data-stream-act="next"]');
    s = await steps();
    expect(s[3]!.slice(0, 2)).toEqual(['get_next', 'false']);
    expect(s[3]![2]).toBe('returned 29 (EIO); get_last_error: batch 1: get_next: the producer lost its input while reading batch 1');
    await page.click('button[data-stream-act="release"]');
    expect(await pg<number>(page, 'bytesAllocated()')).toBe(before);

    // The async device stream: tasks only within the credit request(n) gives; the end, on_error, cancel.
    const events = async (n: number) => {
      await page.waitForFunction((k) => document.querySelectorAll('.async-events tr').length >= k, n, { timeout: 10_000 });
      return page.$$eval('.async-events tr', (rs) => rs.map((r) => `${r.getAttribute('data-event')}: ${r.querySelector('td.result')!.textContent}`));
    };
    await page.click('button[data-async-act="start"]');
    expect(await events(1)).toEqual(['on_schema: the producer\'s schema, moved in: id, name, scores, city; no task comes before request(n)']);
    await page.fill('#async-n', '2');
    await page.click('button[data-async-act="request"]');
    expect((await events(4)).slice(1).map((e) => e.split(':')[0])).toEqual(['request(2)', 'on_next_task', 'on_next_task']);
    await page.waitForTimeout(100); // no third task without credit
    expect((await events(4)).length).toBe(4);
    expect(await page.getAttribute('[data-credit]', 'data-credit')).toBe('0');
    await page.fill('#async-n', '5');
    await page.click('button[data-async-act="request"]');
    const all = await events(10);
    expect(all.slice(4).map((e) => e.split(':')[0])).toEqual(['request(5)', 'on_next_task', 'on_next_task', 'on_next_task', 'on_next_task', 'release']);
    expect(all[8]).toBe('on_next_task: task NULL: the end of the stream');
    expect(await pg<number>(page, 'bytesAllocated()')).toBe(before);
    await page.click('button[data-async-act="start-failing"]');
    await events(1);
    await page.click('button[data-async-act="request"]');
    expect((await events(5)).slice(3)).toEqual(['on_error: code 29: the producer lost its input after batch 0', 'release: the producer released the handler: the stream is over']);
    await page.click('button[data-async-act="start"]');
    await events(1);
    await page.fill('#async-n', '1');
    await page.click('button[data-async-act="request"]');
    await events(3);
    await page.click('button[data-async-act="cancel"]');
    expect((await events(5)).slice(3).map((e) => e.split(':')[0])).toEqual(['cancel', 'release']);
    expect(await pg<number>(page, 'bytesAllocated()')).toBe(before);
    await shoot(page, 'streams');
  });

  // Each link is a fresh page that loads apache-arrow's ES modules (a few hundred files) from the installed package: a few seconds each.
  test('every link of docs/learn.md opens its state: its sample, its layout, every step done', async () => {
    const links = [...readFileSync('docs/learn.md', 'utf8').matchAll(/\(http:\/\/127\.0\.0\.1:8080\/(#[^)\s]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThanOrEqual(30);
    for (const hash of new Set(links)) {
      const p = await open(hash);
      try {
        const sample = /sample=([a-z0-9-]+)/.exec(hash)![1]!;
        expect({ hash, source: await p.textContent('#source') }).toEqual({ hash, source: expect.stringContaining(`sample ${sample}`) });
        expect({ hash, layout: await pg<string>(p, 'layout()') }).toEqual({ hash, layout: /layout=lp64/.test(hash) ? 'lp64' : 'wasm32' });
        // A step that failed, a step the link does not know or an unknown sample would say so here.
        expect({ hash, status: (await p.textContent('#status')) ?? '' }).toEqual({ hash, status: expect.not.stringMatching(/not done|left out|names no sample|cannot/) });
      } finally {
        await p.close();
      }
    }
  }, 300_000);

  test('screenshots of each panel at 1920×1080; no request left localhost; no page error', async () => {
    await page.setViewportSize({ width: SIZES[1][0], height: SIZES[1][1] });
    await shoot(page, 'devices');
    await tab(page, 'streams');
    await page.click('button[data-stream-act="export"]');
    await page.click('button[data-stream-act="import"]');
    await page.click('button[data-stream-act="next"]');
    await shoot(page, 'streams');
    await tab(page, 'break');
    await shoot(page, 'break');
    await tab(page, 'lifecycle');
    await page.click('button[data-act="import-view"]');
    await shoot(page, 'lifecycle');
    await tab(page, 'memory');
    await page.click('#tree [data-node="device.array.children[1]"] > .node-head');
    await shoot(page, 'memory');
    await shoot(page, 'structs');
    await page.fill('#search', 'list');
    await shoot(page, 'data');
    await page.check('input[name=layout][value=lp64]');
    await shoot(page, 'layout-lp64');
    const shared = await open(await page.evaluate(() => location.hash));
    await shared.setViewportSize({ width: SIZES[1][0], height: SIZES[1][1] });
    await shoot(shared, 'share');
    await shared.close();
    for (const [w, h] of SIZES) {
      for (const panel of ['data', 'structs', 'memory', 'layout-lp64', 'lifecycle', 'break', 'devices', 'streams', 'share']) expect(existsSync(`${SHOTS}/playground-${panel}-${w}x${h}.png`)).toBe(true);
    }
    expect(blocked).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

describe('playground CLI', () => {
  test('a port in use: exit 2 and one line', async () => {
    const busy: Server = createServer();
    await new Promise<void>((ok) => busy.listen(0, '127.0.0.1', ok));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = spawnSync(process.execPath, ['bin/arrow-c-device.mjs', 'playground', '--port', String(port)], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`arrow-c-device: port ${port} on 127.0.0.1 is in use: choose another with --port N (0: any free port)\n`);
    } finally {
      busy.close();
    }
    const bad = spawnSync(process.execPath, ['bin/arrow-c-device.mjs', 'playground', '--port', 'x'], { encoding: 'utf8', timeout: 20_000 });
    expect([bad.status, bad.stderr]).toEqual([2, 'arrow-c-device: --port: expected a port number (0 to 65535), found x\n']);
  });
});
