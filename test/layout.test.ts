// The layout tables come from the compilers; this prints both and checks them
// against Arrow's header sizes, and checks ts/ has no hand-written offsets.
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, lp64, wasm32 } from '../ts/abi/generated/layout.js';
import type { Layout } from '../ts/abi/layout-types.js';

const table = (l: Layout) => Object.entries(l.structs).map(([name, s]) =>
  `${name} (${s.size} bytes)\n${Object.entries(s.fields).map(([f, x]) => `  +${x.offset} ${f} (${x.size}, ${x.kind})`).join('\n')}`).join('\n');

test('wasm32 and LP64 tables, as the compilers gave them', () => {
  console.log(`wasm32:\n${table(wasm32)}\n\nLP64:\n${table(lp64)}`);
  const sizes = (l: Layout) => Object.fromEntries(Object.entries(l.structs).map(([k, s]) => [k, s.size]));
  expect(sizes(wasm32)).toEqual({
    ArrowSchema: 48, ArrowArray: 64, ArrowDeviceArray: 104, ArrowArrayStream: 20, ArrowDeviceArrayStream: 24,
    ArrowAsyncTask: 8, ArrowAsyncProducer: 20, ArrowAsyncDeviceStreamHandler: 24,
  });
  expect(sizes(lp64)).toEqual({
    ArrowSchema: 72, ArrowArray: 80, ArrowDeviceArray: 128, ArrowArrayStream: 40, ArrowDeviceArrayStream: 48,
    ArrowAsyncTask: 16, ArrowAsyncProducer: 40, ArrowAsyncDeviceStreamHandler: 48,
  });
  const device = (l: Layout) => ['device_id', 'device_type', 'sync_event', 'reserved'].map((f) => l.structs.ArrowDeviceArray.fields[f].offset);
  expect(device(wasm32)).toEqual([64, 72, 76, 80]);
  expect(device(lp64)).toEqual([80, 88, 96, 104]);
  // The header's ArrowAsyncProducer has no release member (shared/spec/NOTES.md).
  expect(Object.keys(wasm32.structs.ArrowAsyncProducer.fields)).toEqual(['device_type', 'request', 'cancel', 'additional_metadata', 'private_data']);
  expect(wasm32.structs.ArrowAsyncProducer.fields.additional_metadata.offset).toBe(12);
  // Same fields in the same order on both ABIs; every pointer is 4 or 8 bytes.
  for (const [name, s] of Object.entries(wasm32.structs)) {
    expect(Object.keys(s.fields)).toEqual(Object.keys(lp64.structs[name as keyof typeof lp64.structs].fields));
    for (const f of Object.values(s.fields)) if (f.kind === 'ptr' || f.kind === 'fnptr') expect(f.size).toBe(4);
  }
  for (const f of Object.values(lp64.structs.ArrowSchema.fields)) if (f.kind === 'ptr') expect(f.size).toBe(8);
});

test('constants from the header', () => {
  expect(constants).toMatchObject({
    ARROW_FLAG_DICTIONARY_ORDERED: 1, ARROW_FLAG_NULLABLE: 2, ARROW_FLAG_MAP_KEYS_SORTED: 4,
    ARROW_DEVICE_CPU: 1, ARROW_DEVICE_CUDA: 2, ARROW_DEVICE_CUDA_HOST: 3, ARROW_DEVICE_OPENCL: 4, ARROW_DEVICE_VULKAN: 7,
    ARROW_DEVICE_METAL: 8, ARROW_DEVICE_VPI: 9, ARROW_DEVICE_ROCM: 10, ARROW_DEVICE_ROCM_HOST: 11, ARROW_DEVICE_EXT_DEV: 12,
    ARROW_DEVICE_CUDA_MANAGED: 13, ARROW_DEVICE_ONEAPI: 14, ARROW_DEVICE_WEBGPU: 15, ARROW_DEVICE_HEXAGON: 16,
  });
});

test('no struct offset literal in ts/ outside the generated tables', () => {
  const dir = join(__dirname, '..', 'ts');
  const offending: string[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    readFileSync(join(dir, name), 'utf8').split('\n').forEach((line, i) => {
      // An address plus a number, or a DataView access at a literal offset.
      if (/\b(ptr|address|base|at)\s*\+\s*\d+\b(?!\s*\*)/.test(line) || /get(Ui|I)nt(32|64)\(\s*\w+\s*\+\s*\d+/.test(line)) {
        offending.push(`${name}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  expect(offending).toEqual([]);
});

function compiler(names: string[]): string | null {
  for (const n of names) if (spawnSync('sh', ['-c', `command -v ${n}`]).status === 0) return n;
  return null;
}

test.each([
  ['C', ['cc', 'gcc', 'clang', 'clang-14'], ['-x', 'c', '-std=c99']],
  ['C++', ['c++', 'g++', 'clang++', 'clang++-14'], ['-x', 'c++', '-std=c++11']],
])('the canonical header compiles as %s with no warnings', (_lang, names, flags) => {
  const cc = compiler(names);
  expect(cc).not.toBeNull();
  const header = join(__dirname, '..', 'csrc', 'arrow_c_device.h');
  const r = spawnSync(cc!, [...flags, '-Wall', '-Wextra', '-Wpedantic', '-Werror', '-fsyntax-only', header], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
});
