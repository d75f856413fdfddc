// The built-in sample behind `npm start`: a small table exported into wasm
// memory as an ArrowSchema + ArrowDeviceArray, shown as the C structs it
// became, imported back zero-copy, and released.

import * as arrow from 'apache-arrow';
import { describeDeviceArray, describeSchema, type ArrowCDevice } from '../index.js';

export function sampleTable(): arrow.Table {
  const cities = arrow.vectorFromArray(['Lyon', 'Oslo', null, 'Lima'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8()));
  return new arrow.Table({
    id: arrow.vectorFromArray([1, 2, 3, 4], new arrow.Int32()),
    name: arrow.vectorFromArray(['ada', null, 'grace', 'linus'], new arrow.Utf8()),
    scores: arrow.vectorFromArray([[1.5, 2], [], null, [3.25]], new arrow.List(new arrow.Field('item', new arrow.Float64(), true))),
    city: cities,
  });
}

export async function roundtripDemo(acd: ArrowCDevice, print: (line: string) => void): Promise<void> {
  const table = sampleTable();
  const start = acd.bytesAllocated();
  print('A table made with apache-arrow:');
  print(indent(table.toString()));
  const exported = acd.exportDeviceBatch(table.batches[0]);
  print('');
  print(`Exported into wasm memory (${acd.bytesAllocated() - start} bytes allocated by the C core).`);
  print('The ArrowSchema:');
  describeSchema(acd.core.structs, exported.schema).forEach((l) => print(`  ${l}`));
  print('');
  print('The ArrowDeviceArray (ARROW_DEVICE_CPU, device_id -1, no sync event):');
  describeDeviceArray(acd.core.structs, exported.array).forEach((l) => print(`  ${l}`));

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
