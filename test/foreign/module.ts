// The foreign module of the foreign-module tests: test/foreign/producer.c
// and the type cases and consumer of types*.c, built by emcc as one
// standalone wasm module (its own memory, allocator and growable table),
// once per test file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface Producer {
  memory: WebAssembly.Memory;
  __indirect_function_table: WebAssembly.Table;
  malloc(n: number): number;
  free(p: number): void;
  live_blocks(): number;
  released_count(): number;
  add_ptr(): number;
  boom_ptr(): number;
  make_schema(): number;
  make_array(length: bigint, offset: bigint): number;
  free_struct(p: number): void;
  sum_int32(schema: number, array: number): bigint;
  sum_batch_column(schema: number, array: number, column: bigint): bigint;
  hash_utf8(schema: number, array: number): number;
  sum_device_int32(schema: number, device: number): bigint;
  make_stream(batches: bigint, failAt: bigint): number;
  drain_stream(stream: number): bigint;
  consumer_message_ptr(): number;
  // types.c, types-nested.c, types-consume.c
  types_live_blocks(): number;
  types_roots_released(): number;
  types_nodes_released(): number;
  types_streams_released(): number;
  types_free(p: number): void;
  types_message(): number;
  case_count(): number;
  case_name(i: number): number;
  case_schema(i: number): number;
  case_array(i: number): number;
  case_device_array(i: number): number;
  batch_schema(): number;
  batch_array(): number;
  batch_device_array(): number;
  consume_batch(schema: number, array: number): bigint;
  consume_stream(stream: number): bigint;
  types_stream(batches: bigint): number;
  // test/foreign/async.c: the async device stream, both sides
  async_live_blocks(): number;
  async_stat(i: number): bigint;
  async_reset_stats(): void;
  async_producer_start(handler: number, batches: bigint, rows: bigint, failAt: bigint): number;
  async_producer_pump(producer: number): number;
  async_consumer_new(window: bigint, cancelAfter: bigint, defer: number): number;
  async_consumer_pump(handler: number): bigint;
  async_consumer_result(handler: number, i: number): bigint;
  async_consumer_message(handler: number): number;
  async_consumer_free(handler: number): void;
}

const wasm = new Map<string, Uint8Array>();

/**
 * The module's binary, built on first use; its memory may grow to
 * `maximumMemory` (emcc's default for a growable memory is 2GB; up to 4GB).
 */
export function producerWasm(maximumMemory = '2GB'): Uint8Array {
  let binary = wasm.get(maximumMemory);
  if (binary === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'acd-foreign-'));
    const out = join(dir, 'producer.wasm');
    execFileSync('emcc', ['-O2', '-std=c11', '-Wall', '-Werror', '-sSTANDALONE_WASM', '--no-entry', '-sALLOW_MEMORY_GROWTH', '-sALLOW_TABLE_GROWTH',
      `-sMAXIMUM_MEMORY=${maximumMemory}`, '-sEXPORTED_FUNCTIONS=_malloc,_free', `-I${join(ROOT, 'csrc')}`,
      ...['producer.c', 'types.c', 'types-nested.c', 'types-consume.c', 'async.c'].map((f) => join(ROOT, 'test', 'foreign', f)), '-o', out],
    { env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') }, stdio: 'pipe' });
    binary = readFileSync(out);
    wasm.set(maximumMemory, binary);
  }
  return binary;
}

/** A new instance of the module (of producerWasm(maximumMemory)): its own memory and table. */
export function instantiate(maximumMemory?: string): Producer {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(producerWasm(maximumMemory)), { env: { emscripten_notify_memory_growth() {} } });
  (instance.exports._initialize as () => void)();
  return instance.exports as unknown as Producer;
}

export { libraryError as error } from '../helpers.js';
