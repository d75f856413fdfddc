// Compressed files as users have them: Feather v2 files and IPC files and
// streams written by pyarrow (Arrow C++) with LZ4_FRAME and ZSTD bodies
// (scripts/cross/compressed_fixtures.py, into a temporary folder), read by
// both readers, this library's (readIpc) and apache-arrow's (tableFromIPC
// after registerCompression), each equal to its reading of the same table
// written uncompressed and to the values pyarrow gives for sample rows; then
// round trips through the C Data Interface, the CLI's `roundtrip`, and
// corrupted copies of the files. scripts/cross/setup.sh makes the pyarrow
// virtualenv the first time: when it cannot, these tests fail, never skip.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import { compareBatches, schemaDifferences } from '../ts/arrow-js/compare.js';
import { registerCompression } from '../ts/io/ipc/arrow-codecs.js';
import { readIpc } from '../ts/io/ipc/read.js';
import { compareRaw, rawValues } from '../ts/model/raw-values.js';
import { roundtripRaw, roundtripTable } from '../ts/roundtrip/roundtrip.js';
import { core, MODES } from './helpers.js';

const ROOT = resolve(__dirname, '..');
const PYTHON = join(ROOT, 'build', 'venv-cross', 'bin', 'python');
const BIN = join(ROOT, 'bin', 'arrow-c-device.mjs');
const CODECS = ['lz4', 'zstd'] as const;
const FORMATS = ['feather', 'arrow', 'arrows'] as const;

interface Manifest {
  pyarrow: string;
  rows: number;
  columns: string[];
  batches: { feather: number[]; ipc: number[] };
  sizes: Record<string, number>;
  samples: Record<string, unknown[]>;
}

function run(command: string, args: string[], timeout: number): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', timeout, killSignal: 'SIGKILL' });
}

const describeRun = (what: string, r: SpawnSyncReturns<string>) =>
  `${what}: exit status ${r.status}${r.signal ? `, killed by ${r.signal}` : ''}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

let out = '';
let manifest: Manifest;
let acd: ArrowCDevice;

beforeAll(async () => {
  acd = await core();
  const setup = run('bash', [join(ROOT, 'scripts', 'cross', 'setup.sh')], 240_000);
  if (setup.status !== 0) throw new Error(`scripts/cross/setup.sh failed: these tests need pyarrow\n${describeRun('setup.sh', setup)}`);
  out = mkdtempSync(join(tmpdir(), 'acd-compressed-'));
  const written = run(PYTHON, [join(ROOT, 'scripts', 'cross', 'compressed_fixtures.py'), out], 120_000);
  if (written.status !== 0) throw new Error(describeRun('compressed_fixtures.py', written));
  manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
  registerCompression();
}, 300_000);

afterAll(() => {
  if (out !== '') rmSync(out, { recursive: true, force: true });
});

const bytesOf = (name: string) => new Uint8Array(readFileSync(join(out, name)));
const lengths = (format: string) => (format === 'feather' ? manifest.batches.feather : manifest.batches.ipc);

test('pyarrow wrote every file, the compressed ones smaller, and Feather\'s default is LZ4', () => {
  expect(manifest.pyarrow).toMatch(/^\d+\.\d+\.\d+/);
  for (const codec of CODECS) {
    for (const format of FORMATS) {
      // Compression did happen: far fewer bytes than uncompressed.
      expect([codec, format, manifest.sizes[`${codec}.${format}`]! < 0.7 * manifest.sizes[`uncompressed.${format}`]!]).toEqual([codec, format, true]);
    }
  }
  // default.feather is one batch; its LZ4 frames show in its bytes.
  const lz4Magic = Buffer.from([0x04, 0x22, 0x4d, 0x18]);
  expect(Buffer.from(bytesOf('default.feather')).includes(lz4Magic)).toBe(true);
  expect(Buffer.from(bytesOf('uncompressed.feather')).includes(lz4Magic)).toBe(false);
});

describe.each(CODECS)('%s', (codec) => {
  test.each(FORMATS)('this library\'s reader: %s equals the uncompressed file and pyarrow\'s sample rows', (format) => {
    const file = readIpc(bytesOf(`${codec}.${format}`));
    const plain = readIpc(bytesOf(`uncompressed.${format}`));
    expect(file.schema.fields.map((f) => f.name)).toEqual(manifest.columns);
    expect(file.batches.map((b) => b.length)).toEqual(lengths(format));
    file.batches.forEach((b, i) => expect([i, compareRaw(plain.batches[i]!, b, `batches[${i}]`)]).toEqual([i, []]));
    const columns = manifest.columns.map((_, k) => file.batches.flatMap((b) => rawValues(b.children[k]!)));
    for (const [row, values] of Object.entries(manifest.samples)) {
      expect([row, columns.map((c) => c[Number(row)])]).toEqual([row, values]);
    }
  });

  test.each(FORMATS)('apache-arrow\'s reader: %s equals its reading of the uncompressed file', (format) => {
    const table = arrow.tableFromIPC(bytesOf(`${codec}.${format}`));
    const plain = arrow.tableFromIPC(bytesOf(`uncompressed.${format}`));
    expect(table.numRows).toBe(manifest.rows);
    expect(table.batches.length).toBe(plain.batches.length);
    table.batches.forEach((b, i) => {
      expect([i, schemaDifferences(plain.batches[i]!, b), compareBatches(plain.batches[i]!, b, i)]).toEqual([i, [], []]);
    });
  });

  // The Feather file only: the IPC files' batches are the same (above).
  test.each(MODES)('the Feather file through the C Data Interface (%s mode): both readers\' batches, nothing leaked', (mode) => {
    const name = `${codec}.feather`;
    const bytes = bytesOf(name);
    const viaArrow = roundtripTable(acd, arrow.tableFromIPC(bytes), name, mode, 'cpu', 'full');
    const viaOwn = roundtripRaw(acd, readIpc(bytes), name, { mode, validate: 'full' });
    for (const s of [viaArrow, viaOwn]) {
      expect([s.reader, s.errors, s.mismatches]).toEqual([s.reader, [], []]);
      expect(s).toMatchObject({ ok: true, rows: manifest.rows, columns: manifest.columns.length, bytesLeaked: 0 });
    }
  });
});

describe('the CLI', () => {
  test.each([
    ['lz4.feather', []], ['default.feather', []], ['zstd.feather', []], ['lz4.arrows', ['--reader', 'own']], ['zstd.arrow', ['--reader', 'apache-arrow', '--mode', 'view']],
  ])('roundtrip %s %p', (name, args) => {
    const r = run(process.execPath, [BIN, 'roundtrip', ...args, join(out, name)], 120_000);
    expect([r.status, r.stderr]).toEqual([0, '']);
    const batches = name === 'default.feather' ? 1 : 3;
    const reader = args.includes('own') ? ', read by the own IPC reader' : '';
    const mode = args.includes('view') ? 'view' : 'copy';
    expect(r.stdout).toBe(`ok: ${join(out, name)} (${mode} mode${reader}): ${batches} batches, ${manifest.rows} rows, ${manifest.columns.length} columns, 0 bytes leaked\n`);
  });

  test('a corrupted LZ4 frame: exit status 2 and the buffer named', () => {
    const bytes = bytesOf('lz4.arrows');
    // The first frame's first block size, made larger than the frame.
    const at = Buffer.from(bytes).indexOf(Buffer.from([0x04, 0x22, 0x4d, 0x18]));
    bytes.set([0xff, 0xff, 0xff, 0x00], at + 7);
    const path = join(out, 'corrupt.arrows');
    writeFileSync(path, bytes);
    const r = run(process.execPath, [BIN, 'roundtrip', path], 60_000);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/is not a readable Arrow IPC file, stream or integration JSON: message 1 \((record|dictionary) batch\): buffer \d+ \(.+\): LZ4 frame: frame 0: block 0 of 16777215 bytes, more than the frame's maximum of \d+/);
  });
});

describe('corrupted copies of pyarrow\'s files, read by this library', () => {
  /** Every offset of `pattern` in `bytes`. */
  const offsets = (bytes: Uint8Array, pattern: number[]) => {
    const found: number[] = [];
    for (let at = Buffer.from(bytes).indexOf(Buffer.from(pattern)); at >= 0; at = Buffer.from(bytes).indexOf(Buffer.from(pattern), at + 1)) found.push(at);
    return found;
  };
  const readError = (bytes: Uint8Array) => {
    try {
      readIpc(bytes);
    } catch (e) {
      if (e instanceof ArrowCDeviceError) return e.message;
      throw e;
    }
    return 'read without an error';
  };

  test.each([
    ['lz4.arrows', [0x04, 0x22, 0x4d, 0x18]],
    ['zstd.arrows', [0x28, 0xb5, 0x2f, 0xfd]],
  ])('%s: frames with a wrong uncompressed length, or a reserved bit set', (name, magic) => {
    const original = bytesOf(name);
    const frames = offsets(original, magic as number[]).slice(0, 40);
    expect(frames.length).toBeGreaterThan(10);
    const buffer = /^message \d+ \((record|dictionary) batch\): buffer \d+ \(.+\): /;
    for (const at of frames) {
      const view = new DataView(original.buffer, original.byteOffset);
      const claim = view.getBigInt64(at - 8, true);
      for (const wrong of [claim + 1n, claim - 1n]) {
        const bytes = original.slice();
        new DataView(bytes.buffer).setBigInt64(at - 8, wrong, true);
        expect([at, wrong, readError(bytes)]).toEqual([at, wrong, expect.stringMatching(buffer)]);
      }
    }
    // A reserved bit of a frame header set.
    const bytes = original.slice();
    bytes[frames[1]! + 4]! ^= name.startsWith('lz4') ? 0x02 : 0x08;
    expect(readError(bytes)).toMatch(new RegExp(`${buffer.source}(LZ4|ZSTD) frame: frame 0: .*reserved bit`));
  });
});
