// The decoders of compressed IPC buffers (ts/io/ipc/lz4.ts, zstd.ts,
// compression.ts) on frames made by hand (test/compression-helpers.ts):
// what they decode, and the errors for every truncation, wrong lengths and
// checksums, matches out of range, and claims refused before allocating;
// and registerCompression's effect on apache-arrow's registry (and that
// importing the built package has none). Files written
// by pyarrow are test/cross-compression.test.ts's.
import { afterEach, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { compressionRegistry, CompressionType, type Codec } from 'apache-arrow';
import { registerCompression } from '../ts/io/ipc/arrow-codecs.js';
import { decode, decompressBuffer, MAX_DECOMPRESSED_BYTES } from '../ts/io/ipc/compression.js';
import { decodeLz4, xxh32 } from '../ts/io/ipc/lz4.js';
import { decodeZstd, ZSTD_MAX_WINDOW } from '../ts/io/ipc/zstd.js';
import { lz4Frame, lz4Sequence, prefixed, zstdFrame } from './compression-helpers.js';
import { libraryError } from './helpers.js';

const bytes = (s: string) => Uint8Array.from(Buffer.from(s));
const text = (b: Uint8Array) => Buffer.from(b).toString();
const CAP = 1 << 20;

/** The error `f` throws: an ArrowCDeviceError whose message matches, with its errno name. */
function error(f: () => unknown, message: RegExp): string {
  const caught = libraryError(f);
  expect(caught.message).toMatch(message);
  return caught.code;
}

test('xxh32 gives the reference values (seed 0)', () => {
  expect(xxh32(bytes(''))).toBe(0x02cc5d05);
  expect(xxh32(bytes('a'))).toBe(0x550d7456);
  expect(xxh32(bytes('abc'))).toBe(0x32d153ff);
  expect(xxh32(bytes('Nobody inspects the spammish repetition'))).toBe(0xe2293b2f);
});

describe('LZ4 frames', () => {
  const hello = lz4Sequence([...bytes('hello ')], { offset: 6, length: 12 });
  const last = lz4Sequence([...bytes('world')]);
  const content = 'hello hello hello world';

  test('stored and compressed blocks, matches that overlap, long literal and match lengths', () => {
    expect(text(decodeLz4(lz4Frame([{ bytes: [...bytes('stored')], raw: true }]), 6, CAP))).toBe('stored');
    expect(text(decodeLz4(lz4Frame([{ bytes: [...hello, ...last] }]), content.length, CAP))).toBe(content);
    // Offset 1, length 300: a run of one byte, with extension bytes for both lengths.
    const long = 'x'.repeat(20);
    const run = lz4Frame([{ bytes: [...lz4Sequence([...bytes(long)], { offset: 1, length: 300 }), ...lz4Sequence([...bytes('.')])] }]);
    expect(text(decodeLz4(run, 321, CAP))).toBe(`${'x'.repeat(320)}.`);
    // Without the expected length (apache-arrow's interface): the same bytes.
    expect(text(decodeLz4(run, undefined, CAP))).toBe(`${'x'.repeat(320)}.`);
  });

  test('linked blocks refer to earlier blocks; independent blocks may not', () => {
    const blocks = [{ bytes: lz4Sequence([...bytes('abcdefgh')]) }, { bytes: [...lz4Sequence([], { offset: 8, length: 8 }), ...lz4Sequence([...bytes('!')])] }];
    expect(text(decodeLz4(lz4Frame(blocks, { independent: false }), 17, CAP))).toBe('abcdefghabcdefgh!');
    expect(error(() => decodeLz4(lz4Frame(blocks, { independent: true }), 17, CAP), /frame 0 block 1: match offset 8 at output byte 8 reaches before the block/)).toBe('EINVAL');
  });

  test('checksums and the content size are verified when the frame has them', () => {
    const c = bytes(content);
    const frame = (o: object) => lz4Frame([{ bytes: [...hello, ...last] }], { content: c, contentChecksum: true, blockChecksums: true, contentSize: c.length, ...o });
    expect(text(decodeLz4(frame({}), c.length, CAP))).toBe(content);
    const corrupt = frame({});
    corrupt[corrupt.length - 1]! ^= 1;
    error(() => decodeLz4(corrupt, c.length, CAP), /^LZ4 frame: frame 0: content checksum mismatch$/);
    const badBlock = frame({});
    badBlock[badBlock.length - 9]! ^= 1; // the block checksum's last byte
    error(() => decodeLz4(badBlock, c.length, CAP), /block 0: block checksum mismatch/);
    error(() => decodeLz4(frame({ contentSize: 99 }), c.length, CAP), /content sizes add up to 99 bytes, the IPC buffer's uncompressed length is 23/);
    const header = frame({});
    header[4]! ^= 0x02; // a reserved bit, and so a wrong header checksum
    error(() => decodeLz4(header, c.length, CAP), /header checksum|reserved bits/);
  });

  test('every truncation of a frame is an error, never fewer bytes', () => {
    const frame = lz4Frame([{ bytes: [...hello, ...last] }], { blockChecksums: true, contentChecksum: true, content: bytes(content) });
    for (let n = 0; n < frame.length; n++) {
      expect([n, error(() => decodeLz4(frame.subarray(0, n), content.length, CAP), /./)]).toEqual([n, 'EINVAL']);
    }
  });

  test('a wrong uncompressed length, matches and literals out of range, a bad magic, the legacy format, dictionaries', () => {
    const frame = lz4Frame([{ bytes: [...hello, ...last] }]);
    error(() => decodeLz4(frame, content.length + 1, CAP), /decompresses to 23 bytes, the IPC buffer's uncompressed length is 24/);
    error(() => decodeLz4(frame, content.length - 1, CAP), /decompresses past 22 bytes/);
    error(() => decodeLz4(lz4Frame([{ bytes: lz4Sequence([1, 2], { offset: 3, length: 4 }) }]), 10, CAP), /match offset 3 at output byte 2 reaches before the start/);
    error(() => decodeLz4(lz4Frame([{ bytes: lz4Sequence([1, 2], { offset: 0, length: 4 }) }]), 10, CAP), /match offset 0/);
    error(() => decodeLz4(lz4Frame([{ bytes: [0x50, 1, 2] }]), 5, CAP), /5 literals at byte \d+ run past the block/);
    error(() => decodeLz4(lz4Frame([{ bytes: lz4Sequence([1, 2], { offset: 1, length: 4 }) }]), 6, CAP), /ends without its last literals/);
    error(() => decodeLz4(Uint8Array.of(1, 2, 3, 4, 5), 1, CAP), /magic number 0x4030201 at byte 0, expected 0x184d2204/);
    expect(error(() => decodeLz4(Uint8Array.of(0x02, 0x21, 0x4c, 0x18, 0, 0, 0, 0), 1, CAP), /legacy LZ4 frame format/)).toBe('ENOSYS');
    const dict = lz4Frame([]);
    dict[4]! |= 1;
    expect(error(() => decodeLz4(dict, 0, CAP), /dictionary/)).toBe('ENOSYS');
    // Without an expected length, a frame that may decompress past the cap is refused before allocating.
    error(() => decodeLz4(lz4Frame([{ bytes: Array(300).fill(0xff) }]), undefined, 1000), /may decompress to 65536 bytes, more than this reader's bound of 1000/);
  });
});

describe('Zstandard frames (fzstd)', () => {
  const blocks = [{ raw: [...bytes('zstd ')] }, { rle: 0x21, count: 3 }, { raw: [...bytes(' raw')] }];
  const content = 'zstd !!! raw';

  test('raw and RLE blocks, with and without a content size, several frames', () => {
    for (const fcs of [true, false]) {
      expect(text(decodeZstd(zstdFrame(blocks, fcs), content.length, CAP))).toBe(content);
      expect(text(decodeZstd(zstdFrame(blocks, fcs), undefined, CAP))).toBe(content);
    }
    const two = Uint8Array.from([...zstdFrame(blocks, true), ...zstdFrame(blocks, false)]);
    expect(text(decodeZstd(two, 2 * content.length, CAP))).toBe(content + content);
    expect(decodeZstd(two, undefined, CAP).byteOffset).toBe(0);
  });

  test('every truncation of a frame is an error', () => {
    for (const fcs of [true, false]) {
      const frame = zstdFrame(blocks, fcs);
      for (let n = 1; n < frame.length; n++) error(() => decodeZstd(frame.subarray(0, n), content.length, CAP), /truncated/);
    }
  });

  test('wrong lengths, windows past the limit, reserved block types, fzstd\'s own errors', () => {
    error(() => decodeZstd(zstdFrame(blocks, true), content.length + 1, CAP), /content sizes add up to 12 bytes, the IPC buffer's uncompressed length is 13/);
    error(() => decodeZstd(zstdFrame(blocks, false), content.length + 1, CAP), /decompresses to 12 bytes, the IPC buffer's uncompressed length is 13/);
    error(() => decodeZstd(zstdFrame(blocks, false), content.length - 1, CAP), /decompresses to more than 11 bytes/);
    const window = zstdFrame(blocks, false);
    window[5] = (28 - 10) << 3; // 2^28 bytes
    expect(error(() => decodeZstd(window, content.length, CAP), new RegExp(`a window of ${2 ** 28} bytes, more than ${ZSTD_MAX_WINDOW}`))).toBe('ERANGE');
    const reserved = zstdFrame([{ raw: [1] }], true);
    reserved[9]! |= 0x06; // block type 3
    error(() => decodeZstd(reserved, 1, CAP), /block 0 has the reserved block type/);
    // A compressed block of garbage: fzstd's error, named.
    const garbage = Uint8Array.from([...zstdFrame([{ raw: [] }], false).subarray(0, 6), (4 << 3) | (2 << 1) | 1, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    error(() => decodeZstd(garbage, 100, CAP), /^ZSTD frame: frame 0: fzstd: /);
  });
});

describe('a compressed IPC buffer', () => {
  const frame = lz4Frame([{ bytes: [...bytes('abcdefgh')], raw: true }]);
  const region = (b: number[]) => Uint8Array.from(b);

  test('empty, not compressed (-1), compressed', () => {
    const budget = { decompressed: 0 };
    expect(decompressBuffer({ codec: 'LZ4_FRAME' }, new Uint8Array(0), budget)).toEqual(new Uint8Array(0));
    expect(text(decompressBuffer({ codec: 'LZ4_FRAME' }, region(prefixed(-1, [...bytes('as is')])), budget))).toBe('as is');
    expect(text(decompressBuffer({ codec: 'LZ4_FRAME' }, region(prefixed(8, frame)), budget))).toBe('abcdefgh');
    expect(budget.decompressed).toBe(8);
  });

  test('a claim is checked before anything is allocated', () => {
    const budget = { decompressed: 0 };
    error(() => decompressBuffer({ codec: 'LZ4_FRAME' }, region([1, 2, 3]), budget), /3 bytes, too short for the 8-byte uncompressed length/);
    error(() => decompressBuffer({ codec: 'LZ4_FRAME' }, region(prefixed(-2, frame)), budget), /uncompressed length -2, expected -1/);
    error(() => decompressBuffer({ codec: 'LZ4_FRAME' }, region(prefixed(2n ** 40n, frame)), budget),
      new RegExp(`uncompressed length ${2n ** 40n} from ${frame.length} bytes of LZ4_FRAME, which expands at most 256-fold`));
    error(() => decompressBuffer({ codec: 'ZSTD' }, region(prefixed(2n ** 40n, frame)), budget), /which expands at most 32768-fold/);
    const full = { decompressed: MAX_DECOMPRESSED_BYTES - 4 };
    expect(error(() => decompressBuffer({ codec: 'LZ4_FRAME' }, region(prefixed(8, frame)), full), /more than this reader's bound of 4294967296/)).toBe('ERANGE');
    expect(budget.decompressed).toBe(0);
  });

  test('a decoder\'s other errors become ArrowCDeviceError', () => {
    // Not a frame of either codec.
    error(() => decode('ZSTD', Uint8Array.of(9, 9, 9, 9), 4, CAP), /^ZSTD frame: frame 0: magic number/);
  });
});

describe('registerCompression', () => {
  const saved = [CompressionType.LZ4_FRAME, CompressionType.ZSTD].map((t) => [t, compressionRegistry.get(t)] as const);
  afterEach(() => {
    for (const [t, c] of saved) compressionRegistry.set(t, c as Codec);
  });

  test('importing the package registers nothing; registerCompression does', () => {
    const script = `import * as arrow from 'apache-arrow';
      const acd = await import(${JSON.stringify(resolve(__dirname, '..', 'dist', 'ipc.mjs'))});
      const has = () => [arrow.CompressionType.LZ4_FRAME, arrow.CompressionType.ZSTD].map((t) => arrow.compressionRegistry.get(t) !== null);
      const before = has();
      console.log(JSON.stringify({ before, registered: acd.registerCompression(), after: has() }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: resolve(__dirname, '..'), encoding: 'utf8', timeout: 60_000 });
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toEqual({ before: [false, false], registered: ['LZ4_FRAME', 'ZSTD'], after: [true, true] });
  });

  test('registers decoders where none is, once; an application\'s decoder is kept, its encoder too', () => {
    for (const [t] of saved) compressionRegistry.set(t, null as unknown as Codec);
    expect(registerCompression()).toEqual(['LZ4_FRAME', 'ZSTD']);
    const lz4 = compressionRegistry.get(CompressionType.LZ4_FRAME);
    expect(text(lz4!.decode!(lz4Frame([{ bytes: [...bytes('via arrow')], raw: true }])))).toBe('via arrow');
    expect(registerCompression()).toEqual(['LZ4_FRAME', 'ZSTD']);
    expect(compressionRegistry.get(CompressionType.LZ4_FRAME)).toBe(lz4);
    expect(() => lz4!.decode!(Uint8Array.of(1, 2, 3, 4))).toThrow(/^a LZ4_FRAME buffer read by apache-arrow: LZ4 frame: frame 0: magic number/);

    const own: Codec = { decode: (d) => d };
    compressionRegistry.set(CompressionType.ZSTD, own);
    // apache-arrow checks that an encoder makes an LZ4 frame.
    const encode = (d: Uint8Array) => lz4Frame([{ bytes: [...d], raw: true }]);
    compressionRegistry.set(CompressionType.LZ4_FRAME, { encode } as Codec);
    expect(registerCompression()).toEqual(['LZ4_FRAME']);
    expect(compressionRegistry.get(CompressionType.ZSTD)).toBe(own);
    const both = compressionRegistry.get(CompressionType.LZ4_FRAME)!;
    expect(typeof both.decode).toBe('function');
    expect(both.encode!(Uint8Array.of(1, 2))).toEqual(encode(Uint8Array.of(1, 2)));
    expect(both.decode!(both.encode!(Uint8Array.of(1, 2)))).toEqual(Uint8Array.of(1, 2));
  });
});
