// The struct tree of one record batch in either layout: wasm32 as the core
// exports it (real addresses in wasm memory, then released), LP64 as a
// fixture image holds it (addresses are offsets in the image's body, which
// a loader relocates: docs/fixtures.md).

import type { CoreRef } from '../abi/core.js';
import { readDeviceMemory, syncDeviceArray } from '../device/accounting.js';
import { exportDeviceRaw } from '../device/exchange.js';
import { writeBatchRoots, CPU } from '../fixtures/write.js';
import { ImageBuilder } from '../fixtures/image.js';
import { imageSpace, parseFixtureImage } from '../fixtures/parse.js';
import type { RawArray } from '../model/raw.js';
import type { Field } from '../model/types.js';
import { structTree, type StructTree } from './tree.js';

/** The layouts `inspect` shows: the core's own (wasm32) or an LP64 fixture image's. */
export type InspectLayout = 'wasm32' | 'lp64';

/** A batch's structs as a tree, with what its addresses are. */
export interface BatchTree {
  /** The tree. */
  readonly tree: StructTree;
  /** What the addresses are. */
  readonly addresses: string;
  /** The bytes the addresses index when they are not the core's memory (LP64: the image's body), else null. */
  readonly body: Uint8Array | null;
}

/**
 * The tree of an ArrowDeviceArray of the library's core on any device: for
 * one not on the CPU it first waits on the sync event (the producer's
 * copies may be pending until then), then reads the first bytes of each
 * buffer through the device. Their sizes are not read.
 *
 * Ownership: borrows the structs, which stay the caller's; the tree is JS memory.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param schema - the ArrowSchema's address.
 * @param deviceArray - the ArrowDeviceArray's address.
 */
export function deviceTree(acd: CoreRef, schema: number, deviceArray: number): StructTree {
  const waited = { done: false };
  const devicePreview = (address: number, size: number): Uint8Array | null => {
    if (!waited.done) {
      syncDeviceArray(acd.core, deviceArray);
      waited.done = true;
    }
    // Fewer bytes near the end of a block.
    for (let n = size; n >= 1; n = Math.floor(n / 2)) {
      try {
        return readDeviceMemory(acd.core, address, n);
      } catch {
        // Past the end of its block: try fewer bytes.
      }
    }
    return null;
  };
  return structTree(acd.core, schema, { struct: 'ArrowDeviceArray', address: deviceArray }, { devicePreview });
}

/**
 * The schema and ArrowDeviceArray (on the CPU) of a batch, as they are in memory in that layout.
 *
 * Ownership: the structs it makes are released before it returns; the tree is JS memory.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param field - the batch's schema, as a field (`types.recordBatchField`).
 * @param batch - the batch, a raw struct array.
 * @param layout - `wasm32` (the core's export) or `lp64` (a fixture image).
 */
export function batchTree(acd: CoreRef, field: Field, batch: RawArray, layout: InspectLayout): BatchTree {
  if (layout === 'lp64') {
    const b = new ImageBuilder('lp64');
    writeBatchRoots(b, field, batch, CPU);
    const image = parseFixtureImage(b.finish(), 'lp64 image');
    const tree = structTree(imageSpace(image), image.roots[0]!.offset, { struct: 'ArrowDeviceArray', address: image.roots[1]!.offset },
      { loaderCallbacks: new Set(image.callbacks.map((c) => c.offset)) });
    return { tree, addresses: 'offsets in an LP64 fixture image\'s body (docs/fixtures.md), which a loader adds its base to', body: image.body };
  }
  const exported = exportDeviceRaw(acd.core, field, batch);
  try {
    return { tree: structTree(acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array }), addresses: 'the core\'s wasm memory', body: null };
  } finally {
    exported.release();
  }
}
