// The fixture corpus (issue 12, docs/fixtures.md): deterministic bytes, images
// of both layouts whose tables hold what the format promises and whose
// structs read back (through ImageSpace, unrelocated) as exactly what was
// written, expected values that read back equal, and the CLI end to end.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Core } from '../ts/abi/core.js';
import { ArrowCDevice } from '../ts/api.js';
import { DEVICE_TYPES, deviceName, deviceTypeName, eventKindOf } from '../ts/device/device.js';
import { main } from '../ts/cli/cli.js';
import { namePattern } from '../ts/cli/fixtures.js';
import type { FixtureCase } from '../ts/fixtures/case.js';
import { corpusCases, fixtureCases } from '../ts/fixtures/cases.js';
import { caseImage, expectedBatches, expectedIpc, fixtureFiles } from '../ts/fixtures/corpus.js';
import { ImageBuilder, ROOT, type LayoutName } from '../ts/fixtures/image.js';
import { parseFixtureImage, readScript } from '../ts/fixtures/parse.js';
import { CPU, writeSchemaTree } from '../ts/fixtures/write.js';
import { readIpc } from '../ts/io/ipc/read.js';
import { readIntegrationJson } from '../ts/io/json/read.js';
import { compareRaw } from '../ts/model/raw-values.js';
import * as t from '../ts/model/types.js';
import { fieldsEqual, recordBatchField, type DataType, type Kind } from '../ts/model/types.js';
import { imageDifferences, placeImage } from './fixtures-check.js';
import { libraryError } from './helpers.js';

const scratch: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'acd-fixtures-')); scratch.push(d); return d; };
afterAll(() => scratch.forEach((d) => rmSync(d, { recursive: true, force: true })));

const CASES = fixtureCases();
const LAYOUTS: LayoutName[] = ['wasm32', 'lp64'];
const byName = new Map(CASES.map((c) => [c.name, c]));

/** Every file under dir: relative path → bytes. */
function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

/** Every kind of DataType in a case, nested ones included. */
function kinds(type: DataType, out: Set<string>): void {
  out.add(type.kind === 'int' ? `${type.signed ? '' : 'u'}int${type.bitWidth}` : type.kind === 'union' ? `${type.mode}_union`
    : type.kind === 'float' || type.kind === 'decimal' ? `${type.kind}${type.bitWidth}` : type.kind === 'interval' ? `interval_${type.unit}` : type.kind);
  if (type.kind === 'dictionary') kinds(type.valueType, out);
  for (const f of t.childFields(type)) kinds(f.type, out);
}

describe('the corpus', () => {
  test('covers every type of the spec, and what issue 12 lists beside the types', () => {
    const seen = new Set<string>();
    for (const c of CASES) for (const b of c.batches) kinds(b.type, seen);
    const all: (Kind | string)[] = ['null', 'bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
      'float16', 'float32', 'float64', 'decimal32', 'decimal64', 'decimal128', 'decimal256', 'date', 'time', 'timestamp', 'duration',
      'interval_months', 'interval_day_time', 'interval_month_day_nano', 'binary', 'large_binary', 'utf8', 'large_utf8', 'binary_view',
      'utf8_view', 'fixed_size_binary', 'list', 'large_list', 'list_view', 'large_list_view', 'fixed_size_list', 'struct', 'map',
      'sparse_union', 'dense_union', 'dictionary', 'run_end_encoded'];
    expect(all.filter((k) => !seen.has(k))).toEqual([]);
    const names = CASES.map((c) => c.name);
    for (const n of ['sliced-batch', 'null-count-unknown', 'empty-batch', 'extension-uuid', 'metadata-non-utf8', 'flags-not-nullable',
      'flags-dictionary-ordered', 'flags-map-keys-sorted', 'dictionary-in-list', 'dictionary-of-structs', 'dictionary-of-lists',
      'stream-fails', 'device-stream-empty', 'async-stream-batches', 'int32-device', 'sliced-struct-device']) expect(names).toContain(n);
    for (const c of CASES) {
      expect(c.exercises.length).toBeGreaterThan(10);
      expect(c.rule).toMatch(/^(CDataInterface|CDeviceDataInterface|CStreamInterface)\.rst, /);
    }
  });

  test('every rule cited quotes its spec document word for word', () => {
    const spec = (file: string) => readFileSync(join(__dirname, '..', '..', 'shared', 'spec', file), 'utf8')
      .replace(/:c:member:`([^`]*)`/g, '$1').replace(/:ref:`([^<`]*?)\s*(<[^>]*>)?`/g, '$1').replace(/`+/g, '').replace(/\s+/g, ' ');
    const texts = new Map<string, string>();
    for (const rule of new Set(CASES.flatMap((c) => c.rule.split('; ')))) {
      const file = /^(\w+\.rst), /.exec(rule)![1]!;
      if (!texts.has(file)) texts.set(file, spec(file));
      const quotes = [...rule.matchAll(/"([^"]+)"/g)].flatMap((m) => m[1]!.split(' ... '));
      expect(quotes.length).toBeGreaterThan(0);
      for (const q of quotes) expect([rule, texts.get(file)!.includes(q.replace(/\s+/g, ' '))]).toEqual([rule, true]);
    }
  });

  test('is the same bytes when generated twice', () => {
    const a = [...fixtureFiles()];
    const b = [...fixtureFiles()];
    expect(b.map((f) => f.path)).toEqual(a.map((f) => f.path));
    a.forEach((f, i) => expect(Buffer.compare(Buffer.from(f.bytes), Buffer.from(b[i]!.bytes))).toBe(0));
    expect(a[a.length - 1]!.path).toBe('manifest.json');
    expect(new Set(a.map((f) => f.path)).size).toBe(a.length);
  });
});

describe.each(LAYOUTS)('%s images', (layout) => {
  test.each(CASES.map((c) => [c.name, c] as [string, FixtureCase]))('%s: tables consistent, reads back as written', (_name, c) => {
    const image = parseFixtureImage(caseImage(c, layout), c.name);
    expect(image.layoutName).toBe(layout);
    expect(image.body.subarray(0, 64).every((x) => x === 0)).toBe(true);
    expect(imageDifferences(image, c)).toEqual([]);
  });
});

describe('wasm32 images loaded into the core (relocated) pass the C validator at its full level', () => {
  let core: Core;
  let release: number;
  beforeAll(async () => {
    core = await Core.load();
    release = core.addFunction(() => {}, 'vi');
  });

  test.each(CASES.map((c) => [c.name, c] as [string, FixtureCase]))('%s', (_name, c) => {
    const image = parseFixtureImage(caseImage(c, 'wasm32'), c.name);
    const placed = placeImage(core, image, () => release);
    try {
      const { base } = placed;
      const pairs: [number, number][] = [];
      if (c.stream === null) {
        pairs.push([image.roots[0]!.offset, image.roots[1]!.offset]);
      } else {
        const root = image.roots[0]!;
        const script = readScript(image, c.stream.kind === 'async' ? root.offset : root.script);
        for (const b of script.batches) pairs.push([script.schema, b]);
      }
      for (const [schema, array] of pairs) core.arrayValidate(base + schema, base + array, 3);
    } finally {
      placed.free();
    }
  });
});

describe('the cases on simulated devices, placed on them by a loader that has them (docs/fixtures.md, "Sync events")', () => {
  let acd: ArrowCDevice;
  let releases: { schema: number; array: number };
  beforeAll(async () => {
    acd = await ArrowCDevice.load();
    const core = acd.core;
    // Release callbacks that mark the struct released, as the loader's do.
    const at = (struct: 'ArrowSchema' | 'ArrowArray') => core.structs.offsetOf(struct, 'release');
    releases = {
      schema: core.addFunction(((p: number) => core.view.setUint32(p + at('ArrowSchema'), 0, true)) as never, 'vi'),
      array: core.addFunction(((p: number) => core.view.setUint32(p + at('ArrowArray'), 0, true)) as never, 'vi'),
    };
  });
  const onDevices = CASES.filter((c) => c.stream === null && c.device !== undefined && c.device.type !== CPU.type);

  test('every device type of the header but the CPU has a case, with its event kind or NULL', () => {
    expect(onDevices.map((c) => deviceTypeName(c.device!.type)).sort()).toEqual(Object.keys(DEVICE_TYPES).filter((n) => n !== 'cpu').sort());
    expect(onDevices.filter((c) => eventKindOf(c.device!.type) !== null)).toHaveLength(10);
    expect(onDevices.some((c) => c.device!.id > 0)).toBe(true);
  });

  test.each(onDevices.map((c) => [c.name, c] as [string, FixtureCase]))('%s: moved onto its device, synchronized and read back equal', (_name, c) => {
    const core = acd.core;
    const image = parseFixtureImage(caseImage(c, 'wasm32'), c.name);
    const before = acd.bytesAllocated();
    const placed = placeImage(core, image, (behaviour) => (behaviour === 1 ? releases.schema : releases.array));
    const out = core.alloc(core.structs.size('ArrowDeviceArray'));
    try {
      const { base } = placed;
      const v = core.view;
      const [schema, array] = [base + image.roots[0]!.offset, base + image.roots[1]!.offset];
      const s = core.structs;
      const device = { type: s.i32('ArrowDeviceArray', array, 'device_type'), id: Number(s.i64('ArrowDeviceArray', array, 'device_id')) };
      expect(device).toEqual(c.device);
      const record = s.ptr('ArrowDeviceArray', array, 'sync_event');
      const kind = eventKindOf(device.type);
      expect(record === 0 ? null : v.getUint32(record, true)).toBe(kind);
      // The loader has the device: the bytes it placed are host memory, which it copies onto the device, recording an event.
      v.setInt32(array + s.offsetOf('ArrowDeviceArray', 'device_type'), CPU.type, true);
      s.setI64('ArrowDeviceArray', array, 'device_id', -1);
      s.setPtr('ArrowDeviceArray', array, 'sync_event', 0);
      expect(core.device.deviceArrayMoveToDevice(schema, array, device.type, device.id, out)).toBe(0);
      expect(v.getUint32(array + s.offsetOf('ArrowArray', 'release'), true)).toBe(0);
      expect({ type: s.i32('ArrowDeviceArray', out, 'device_type'), id: Number(s.i64('ArrowDeviceArray', out, 'device_id')) }).toEqual(device);
      const event = s.ptr('ArrowDeviceArray', out, 'sync_event');
      // The event the simulation recorded has the kind the image's record names.
      expect(event === 0 ? null : v.getUint32(event, true)).toBe(kind);
      const imported = acd.importDeviceRaw(schema, out, { validate: 'full' });
      try {
        expect(fieldsEqual(imported.value.field, recordBatchField(c.schema))).toBe(true);
        expect(compareRaw(c.batches[0]!, imported.value.array, c.name)).toEqual([]);
      } finally {
        imported.release();
      }
      expect(acd.deviceBytesAllocated(deviceName(device.type, device.id))).toBe(0);
    } finally {
      core.free(out);
      placed.free();
    }
    expect(acd.bytesAllocated()).toBe(before);
  });
});

describe('parsing refuses images that break the format', () => {
  const image = () => caseImage(byName.get('list')!, 'lp64');
  const u64 = (bytes: Uint8Array, at: number) => Number(new DataView(bytes.buffer).getBigUint64(at, true));
  test.each([
    ['a wrong magic', (b: Uint8Array) => { b[0] = 0x42; }, /magic/],
    ['version 2', (b: Uint8Array) => { b[8] = 2; }, /version/],
    ['pointer size 4 in an lp64 image', (b: Uint8Array) => { b[10] = 4; }, /pointer_size/],
    ['relocations out of order', (b: Uint8Array) => {
      const at = u64(b, 32) + 24 * new DataView(b.buffer).getUint32(40, true);
      const first = b.slice(at, at + 8);
      b.copyWithin(at, at + 8, at + 16);
      b.set(first, at + 8);
    }, /sorted/],
    ['a callback field that is not 0', (b: Uint8Array) => {
      const v = new DataView(b.buffer);
      const at = u64(b, 32) + 24 * v.getUint32(40, true) + 8 * v.getUint32(44, true);
      b[u64(b, 16) + u64(b, at)] = 1;
    }, /hold 0/],
    ['a body that does not end the file', (b: Uint8Array) => { new DataView(b.buffer).setBigUint64(24, BigInt(u64(b, 24) + 1), true); }, /does not end/],
  ] as [string, (b: Uint8Array) => void, RegExp][])('%s', (_what, corrupt, message) => {
    const bytes = image();
    expect(() => parseFixtureImage(bytes)).not.toThrow();
    corrupt(bytes);
    expect(libraryError(() => parseFixtureImage(bytes)).message).toMatch(message);
  });

  test('a builder refuses an image whose callback field has no behaviour', () => {
    const b = new ImageBuilder('wasm32');
    b.root(ROOT.schema, b.struct('ArrowSchema'));
    expect(libraryError(() => b.finish()).message).toMatch(/ArrowSchema\.release .* no behaviour/);
    const ok = new ImageBuilder('wasm32');
    ok.root(ROOT.schema, writeSchemaTree(ok, t.field('x', t.int32())));
    expect(parseFixtureImage(ok.finish()).roots).toHaveLength(1);
  });
});

describe('expected values', () => {
  test.each(CASES.map((c) => [c.name, c] as [string, FixtureCase]))('%s: the integration JSON and the IPC stream read back equal', (_name, c) => {
    const files = [...fixtureFiles({ layouts: [], only: (n) => n === c.name })];
    const json = files.find((f) => f.path === `expected/${c.name}.json`)!;
    const expected = expectedBatches(c);
    const file = readIntegrationJson(new TextDecoder().decode(json.bytes));
    expect(fieldsEqual(recordBatchField(c.schema), recordBatchField(file.schema))).toBe(true);
    expect(file.batches).toHaveLength(expected.length);
    expected.forEach((b, i) => expect(compareRaw(b, file.batches[i]!)).toEqual([]));
    const ipc = files.find((f) => f.path === `expected/${c.name}.arrows`);
    const { missing } = expectedIpc(c);
    expect(ipc === undefined).toBe(missing !== null);
    if (ipc !== undefined) {
      const back = readIpc(ipc.bytes);
      expect(fieldsEqual(recordBatchField(c.schema), recordBatchField(back.schema))).toBe(true);
      expected.forEach((b, i) => expect(compareRaw(b, back.batches[i]!)).toEqual([]));
    }
  });

  test('the IPC streams exist for the types apache-arrow holds', () => {
    for (const name of ['int32', 'utf8', 'list', 'struct', 'dictionary', 'stream-batches', 'sliced-batch']) {
      expect([name, expectedIpc(byName.get(name)!).missing]).toEqual([name, null]);
    }
  });
});

describe('the CLI', () => {
  // stderr is not a terminal here: progress only with --progress.
  const run = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), errWrite: (t: string) => err.push(t), errIsTTY: false };
    return { code: await main(args, {}, io), out, err };
  };

  test('two runs give byte-identical trees, with manifest, images and expected files', async () => {
    const [a, b] = [tempDir(), tempDir()];
    expect((await run('fixtures', '--out', a, '--layout', 'both')).code).toBe(0);
    expect((await run('fixtures', '--out', b)).code).toBe(0);
    const ta = tree(a);
    const tb = tree(b);
    expect([...tb.keys()]).toEqual([...ta.keys()]);
    for (const [k, v] of ta) expect([k, Buffer.compare(v, tb.get(k)!)]).toEqual([k, 0]);
    const manifest = JSON.parse(ta.get('manifest.json')!.toString('utf8'));
    expect(manifest.cases.map((c: { name: string }) => c.name)).toEqual(corpusCases().map((c) => c.name));
    for (const c of CASES) for (const l of LAYOUTS) expect(ta.has(join(l, `${c.name}.acdfix`))).toBe(true);
    expect(ta.get('manifest.json')!.toString('utf8')).not.toContain(a);
  });

  test('--only and --layout choose the cases and the layouts', async () => {
    const dir = tempDir();
    const r = await run('fixtures', '--out', dir, '--layout', 'lp64', '--only', 'int*,utf8-view', '--progress');
    expect(r.code).toBe(0);
    expect(r.err[0]).toMatch(/^fixtures: case 1\/15 \([a-z0-9-]+\), 0 files, 0\.0 MB written$/);
    expect(r.err[r.err.length - 1]).toMatch(/^fixtures: 15 cases, \d+ files, [\d.]+ MB written in [\d.]+ s$/);
    expect(r.out).toEqual([expect.stringMatching(/^wrote 15 cases \(lp64\): \d+ files/)]);
    // Without --progress (and stderr not a terminal): nothing on stderr.
    const quiet = await run('fixtures', '--out', tempDir(), '--layout', 'lp64', '--only', 'int8');
    expect([quiet.code, quiet.err]).toEqual([0, []]);
    const names = [...tree(dir).keys()].filter((k) => k.startsWith('lp64')).map((k) => k.replace(/^lp64\/|\.acdfix$/g, ''));
    expect(names).toEqual(['int16-device', 'int16', 'int32-device', 'int32', 'int64-device', 'int64', 'int8-device', 'int8',
      'interval-day-time-device', 'interval-day-time', 'interval-month-day-nano-device', 'interval-month-day-nano', 'interval-months-device',
      'interval-months', 'utf8-view']);
    expect(existsSync(join(dir, 'wasm32'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).layouts).toEqual(['lp64']);
  });

  test.each([
    [['fixtures'], /missing --out/],
    [['fixtures', '--out', 'x', '--layout', 'ilp32'], /--layout: expected wasm32, lp64 or both/],
    [['fixtures', '--out', 'x', '--only', 'no-such-case'], /no case matches/],
    [['fixtures', '--out', 'x', '--frobnicate'], /unknown option --frobnicate/],
  ])('%j exits 2 with one line', async (args, message) => {
    const r = await run(...(args as string[]));
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
  });

  test('a folder that cannot be written exits 2', async () => {
    const file = join(tempDir(), 'a-file');
    require('node:fs').writeFileSync(file, '');
    const r = await run('fixtures', '--out', join(file, 'sub'), '--only', 'int8');
    expect(r.code).toBe(2);
    expect(r.err[r.err.length - 1]).toMatch(/cannot write/);
  });

  test('the built bin writes the corpus (bash build.sh has run)', () => {
    const bin = join(__dirname, '..', 'bin', 'arrow-c-device.mjs');
    const dir = tempDir();
    const r = spawnSync(process.execPath, [bin, 'fixtures', '--out', dir, '--only', 'bool', '--layout', 'wasm32', '--progress'], { encoding: 'utf8', timeout: 60_000 });
    expect([r.status, r.stderr]).toEqual([0, expect.stringContaining('fixtures: case 1/1 (bool)')]);
    expect([...tree(dir).keys()].sort()).toEqual(['expected/bool.arrows', 'expected/bool.json', 'manifest.json', 'wasm32/bool.acdfix']);
    expect(parseFixtureImage(readFileSync(join(dir, 'wasm32', 'bool.acdfix'))).roots.map((r) => r.kind)).toEqual([1, 2]);
  });

  test('namePattern: globs over whole names', () => {
    const m = namePattern('int?,*view');
    expect(['int8', 'int16', 'list-view', 'utf8-view', 'uint8'].filter(m)).toEqual(['int8', 'list-view', 'utf8-view']);
    expect(['sliced-utf8', 'utf8', 'utf8-view'].filter(namePattern('utf8'))).toEqual(['utf8']);
    expect(['a.b', 'axb'].filter(namePattern('a.b'))).toEqual(['a.b']);
  });
});
