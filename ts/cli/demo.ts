// The built-in sample behind `npm start`: a small table (ints and strings
// with nulls, a list, a dictionary) exported into wasm memory as an
// ArrowSchema + ArrowDeviceArray, shown as the C structs it became (the
// renderer of `inspect`), imported back zero-copy, and released.

import * as arrow from 'apache-arrow';
// Only from the library's public entry, as ts/cli/cli.ts.
import { type ArrowCDevice } from '../index.js';
import { demoTable, structTree, treeText } from '../inspect.js';
import { HELP, type CommandSpec } from './options.js';

export const DEMO: CommandSpec = {
  name: 'demo',
  summary: 'export a built-in sample table into wasm memory, show the C structs it became, and import it back',
  description: [
    'Exports a small built-in table (ints and strings with nulls, a list, a dictionary) into wasm memory as an ' +
      'ArrowSchema and an ArrowDeviceArray, shows the C structs it became, imports it back as zero-copy views, releases ' +
      'it, and shows that nothing is left allocated. It takes no arguments.',
  ],
  options: [HELP],
  examples: ['arrow-c-device demo'],
  exitCodes: [[0, 'shown'], [2, 'bad usage (any argument)']],
};

export async function roundtripDemo(acd: ArrowCDevice, print: (line: string) => void): Promise<void> {
  const table = demoTable();
  const start = acd.bytesAllocated();
  print('A table made with apache-arrow:');
  print(indent(table.toString()));
  const exported = acd.exportDeviceBatch(table.batches[0]!);
  print('');
  print(`Exported into wasm memory (${acd.bytesAllocated() - start} bytes allocated by the C core): an ArrowSchema tree and an`);
  print('ArrowDeviceArray on the CPU, as they are in memory (`arrow-c-device inspect --sample demo` shows the same):');
  const tree = structTree(acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array });
  treeText(tree, 'the core\'s wasm memory').forEach((l) => print(`  ${l}`));

  const imported = acd.importDeviceBatch(exported.schema, exported.array, { mode: 'view' });
  print('');
  print('Imported back as zero-copy views over wasm memory (the exported structs were moved, release = NULL):');
  print(indent(new arrow.Table(imported.value).toString()));
  imported.release();
  exported.release();
  print('');
  print(`Released: ${acd.bytesAllocated() - start} bytes still allocated.`);
}

const indent = (s: string) => s.split('\n').map((l) => `  ${l}`).join('\n');
