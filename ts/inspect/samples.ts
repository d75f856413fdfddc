// Samples to look at: the demo's table (ints and strings with nulls, a list,
// a dictionary) and every batch case of the fixture corpus (every type of
// the spec, slices, nulls, dictionaries, run-end encoded, list views, ...),
// each a schema and one record batch.

import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { fromArrowData } from '../arrow-js/arrow-data.js';
import { vectorOf } from '../arrow-js/builders.js';
import { fromArrowSchema } from '../arrow-js/arrow-types.js';
import { fixtureCases } from '../fixtures/cases.js';
import type { RawArray } from '../model/raw.js';
import { recordBatchField, type Schema } from '../model/types.js';

/** A sample batch: its schema and its one batch as a raw array. */
export interface Sample {
  /** Its name ('demo', 'int32', 'run-end-encoded', ...). */
  readonly name: string;
  /** What it exercises. */
  readonly description: string;
  /** The schema. */
  readonly schema: Schema;
  /** The batch, a struct array of the columns. */
  readonly batch: RawArray;
}

/**
 * The demo's table: ints and strings with nulls, a list (an empty and a null
 * one), a dictionary. Built by vectorOf, not apache-arrow's vectorFromArray,
 * which a Content-Security-Policy without 'unsafe-eval' refuses.
 *
 * Ownership: an apache-arrow Table in JS memory; nothing to release.
 */
export function demoTable(): arrow.Table {
  const cities = vectorOf(['Lyon', 'Oslo', null, 'Lima'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8()));
  return new arrow.Table({
    id: vectorOf([1, null, 3, 4], new arrow.Int32()),
    name: vectorOf(['ada', null, 'grace', 'linus'], new arrow.Utf8()),
    scores: vectorOf([[1.5, 2], [], null, [3.25]], new arrow.List(new arrow.Field('item', new arrow.Float64(), true))),
    city: cities,
  });
}

function demoSample(): Sample {
  const table = demoTable();
  const schema = fromArrowSchema(table.schema);
  return {
    name: 'demo', description: 'the demo table: int32 and utf8 with nulls, a list<float64> (an empty and a null list), a dictionary<int8 → utf8>',
    schema, batch: fromArrowData(table.batches[0]!.data, recordBatchField(schema).type),
  };
}

let cache: Sample[] | null = null;

/**
 * Every sample: 'demo' first, then the corpus's batch cases by name.
 *
 * Ownership: JS memory, cached; nothing to release.
 */
export function samples(): readonly Sample[] {
  cache ??= [demoSample(), ...fixtureCases().filter((c) => c.stream === null && c.device === undefined)
    .map((c) => ({ name: c.name, description: c.exercises, schema: c.schema, batch: c.batches[0]! }))];
  return cache;
}

/**
 * The sample of that name; EINVAL naming a few others when there is none.
 *
 * Ownership: JS memory; nothing to release.
 * @throws `ArrowCDeviceError` (EINVAL) naming a few samples when there is none of that name.
 * @param name - its name.
 */
export function sample(name: string): Sample {
  const found = samples().find((s) => s.name === name);
  if (found !== undefined) return found;
  const near = samples().map((s) => s.name).filter((n) => n.includes(name) || name.includes(n)).slice(0, 8);
  throw new ArrowCDeviceError(`no sample named '${name}'${near.length > 0 ? ` (did you mean ${near.join(', ')}?)` : ''}; ` +
    `there are ${samples().length}: demo, ${samples().slice(1, 6).map((s) => s.name).join(', ')}, ...`, EINVAL);
}
