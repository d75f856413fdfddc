// Arrow's C Data integration protocol against every gold JSON file, and its
// failure paths: each entry point returns an error message, never throws,
// and the byte count returns to where it started.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { ArrowCDevice } from '../ts/api.js';
import { CDataIntegration, runIntegration } from '../ts/io/integration.js';
import { core, FULL_CONTENT_ERROR, GOLD, INVALID_AT_FULL } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const load = (path: string) => (path.endsWith('.gz') ? gunzipSync(readFileSync(path)) : readFileSync(path)).toString('utf8');
const jsonFiles = readdirSync(GOLD, { withFileTypes: true }).filter((d) => d.isDirectory())
  .flatMap((d) => readdirSync(join(GOLD, d.name)).filter((n) => n.endsWith('.json.gz')).map((n) => [`${d.name}/${n}`, join(GOLD, d.name, n)]))
  .sort();

test('33 gold JSON files', () => expect(jsonFiles).toHaveLength(33));

test.each(jsonFiles)('%s: schema and every batch through the protocol', (name, path) => {
  const summary = runIntegration(acd, path, load);
  if (INVALID_AT_FULL.test(name)) {
    // The protocol validates fully: these old files hold values Arrow C++ refuses too.
    expect(summary.errors.length).toBeGreaterThan(0);
    for (const e of summary.errors) expect(e).toMatch(FULL_CONTENT_ERROR);
    expect(summary.bytesLeaked).toBe(0);
    return;
  }
  expect(summary.errors).toEqual([]);
  expect(summary.bytesLeaked).toBe(0);
  expect(summary.ok).toBe(true);
});

describe('failure paths', () => {
  const primitive = join(GOLD, '1.0.0-littleendian', 'generated_primitive.json.gz');
  const nested = join(GOLD, '1.0.0-littleendian', 'generated_nested.json.gz');
  let p: CDataIntegration;
  beforeAll(() => { p = new CDataIntegration(acd, load); });
  const withStruct = (struct: 'ArrowSchema' | 'ArrowArray', f: (ptr: number) => void) => {
    const start = acd.bytesAllocated();
    const ptr = acd.core.alloc(acd.core.structs.size(struct));
    f(ptr);
    acd.core.free(ptr);
    expect(acd.bytesAllocated()).toBe(start);
  };

  test('a schema compared to another file: the error names the difference, the schema is released', () => {
    withStruct('ArrowSchema', (ptr) => {
      expect(p.CDataIntegration_ExportSchemaFromJson(primitive, ptr)).toBeNull();
      expect(p.CDataIntegration_ImportSchemaAndCompareToJson(nested, ptr)).toMatch(/^schema: expected struct<.*>, found struct<.*>/);
      expect(acd.core.structs.ptr('ArrowSchema', ptr, 'release')).toBe(0);
    });
  });

  test('a batch compared to another batch: the error names the column and slot', () => {
    withStruct('ArrowArray', (ptr) => {
      expect(p.CDataIntegration_ExportBatchFromJson(primitive, 0, ptr)).toBeNull();
      const error = p.CDataIntegration_ImportBatchAndCompareToJson(primitive, 1, ptr);
      expect(error).toMatch(/batch 1/);
      expect(acd.core.structs.ptr('ArrowArray', ptr, 'release')).toBe(0);
    });
  });

  test('a batch that the full validator rejects: the error has its path, the batch is released', () => {
    withStruct('ArrowArray', (ptr) => {
      expect(p.CDataIntegration_ExportBatchFromJson(nested, 0, ptr)).toBeNull();
      const s = acd.core.structs;
      const child0 = s.ptrAt(s.ptr('ArrowArray', ptr, 'children'));
      s.setI64('ArrowArray', child0, 'null_count', 99);
      expect(p.CDataIntegration_ImportBatchAndCompareToJson(nested, 0, ptr)).toMatch(/root\.children\[0\].*null_count/);
      expect(s.ptr('ArrowArray', ptr, 'release')).toBe(0);
    });
  });

  test('a batch number that does not exist, and a file that does not exist', () => {
    withStruct('ArrowArray', (ptr) => {
      expect(p.CDataIntegration_ExportBatchFromJson(primitive, 99, ptr)).toMatch(/batch 99: .* has 2 batches/);
      expect(p.CDataIntegration_ExportBatchFromJson('/nonexistent.json', 0, ptr)).toMatch(/ENOENT|no such file/);
    });
  });

  test('BytesAllocated is the core count', () => {
    expect(p.BytesAllocated()).toBe(acd.bytesAllocated());
  });
});
