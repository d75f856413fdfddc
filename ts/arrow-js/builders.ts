// apache-arrow builders that never compile code: its makeBuilder with a
// nullValues option makes the null check with new Function, which a
// Content-Security-Policy without 'unsafe-eval' refuses (test/csp.test.ts).
// Used by the conversions of imports (run-end encoded and list-view data
// gathered into plain values, arrow-data.ts) and by the samples.

import * as arrow from 'apache-arrow';

/**
 * apache-arrow's makeBuilder with null and undefined as nulls. Not through its
 * nullValues option: that makes the check with new Function, which a
 * Content-Security-Policy without 'unsafe-eval' refuses. The same check is set
 * on the builder, its children and a dictionary's indices (whose nulls are the
 * dictionary column's).
 */
export function nullableBuilder(type: arrow.DataType): arrow.Builder {
  const builder = arrow.makeBuilder({ type });
  const mark = (b: arrow.Builder) => {
    (b as unknown as { _isValid: (v: unknown) => boolean })._isValid = (v) => v !== null && v !== undefined;
    const indices = (b as { indices?: arrow.Builder }).indices;
    if (indices !== undefined) mark(indices);
    for (const c of b.children) mark(c);
  };
  mark(builder);
  return builder;
}

/** A vector of `type` from plain values (null or undefined for a null slot), as apache-arrow's vectorFromArray but without new Function. */
export function vectorOf<T extends arrow.DataType>(values: Iterable<unknown>, type: T): arrow.Vector<T> {
  const builder = nullableBuilder(type);
  for (const v of values) builder.append(v);
  return new arrow.Vector([builder.finish().flush()]) as arrow.Vector<T>;
}

/** Builds Data of arrowType from the values of `source` at the given indices (null for a null slot). */
export function gather(arrowType: arrow.DataType, source: arrow.Vector, indices: Iterable<number | null>): arrow.Data {
  const builder = nullableBuilder(arrowType);
  for (const i of indices) builder.append(i === null ? null : source.get(i));
  return builder.finish().flush();
}
