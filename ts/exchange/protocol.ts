// The JS exchange protocol (docs/protocol.md), after Python's PyCapsule
// interface: an object that holds Arrow data offers it under well-known
// symbols; each call hands the caller freshly moved structs, in a
// descriptor that says which memory (and table) their addresses belong to.
// The caller owns what it receives; a descriptor it does not consume is
// released by its release() (or, as a backstop, when it is collected).

import { MemorySpace, type AddressSpace, type ReleasableStruct } from '../abi/address-space.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';

/**
 * `Symbol.for('arrow.c_schema')`: the protocol method that hands over an ArrowSchema (docs/protocol.md).
 */
export const ARROW_C_SCHEMA: unique symbol = Symbol.for('arrow.c_schema') as never;
/**
 * `Symbol.for('arrow.c_array')`: the protocol method that hands over an ArrowSchema and an ArrowArray.
 */
export const ARROW_C_ARRAY: unique symbol = Symbol.for('arrow.c_array') as never;
/**
 * `Symbol.for('arrow.c_device_array')`: the protocol method that hands over an ArrowSchema and an ArrowDeviceArray.
 */
export const ARROW_C_DEVICE_ARRAY: unique symbol = Symbol.for('arrow.c_device_array') as never;
/** `Symbol.for('arrow.c_stream')`: the protocol method that hands over an ArrowArrayStream. */
export const ARROW_C_STREAM: unique symbol = Symbol.for('arrow.c_stream') as never;
/**
 * `Symbol.for('arrow.c_device_stream')`: the protocol method that hands over an ArrowDeviceArrayStream.
 */
export const ARROW_C_DEVICE_STREAM: unique symbol = Symbol.for('arrow.c_device_stream') as never;

/** What a protocol method returns: structs the caller now owns, and where they live. */
export interface ArrowCDescriptor {
  /** The memory every address of the descriptor is in. */
  readonly memory: WebAssembly.Memory;
  /** The table their callbacks are in (null: none can be called from outside). */
  readonly table: WebAssembly.Table | null;
  /** The ArrowSchema's address (0 for a stream). */
  readonly schema: number;
  /** An ArrowArray (arrow.c_array) or ArrowDeviceArray (arrow.c_device_array). */
  readonly array?: number;
  /** An ArrowArrayStream (arrow.c_stream) or ArrowDeviceArrayStream (arrow.c_device_stream). */
  readonly stream?: number;
  /**
   * The memory's allocator, when the provider shares it (optional): a
   * consumer in JS moves the structs within that memory with it (view mode),
   * and allocates there the structs a stream's callbacks fill.
   */
  readonly allocator?: { alloc(size: number): number; free(ptr: number): void };
  /**
   * Releases whatever the caller did not move out, and frees the base structs. Idempotent.
   *
   * Ownership: ends the caller's ownership of the descriptor; what an import moved out stays the importer's.
   */
  release(): void;
}

/**
 * An object offering Arrow data by the protocol (docs/protocol.md): each method hands over freshly moved structs in a descriptor the caller owns.
 */
export interface ArrowCProvider {
  /**
   * Hands over the schema.
   *
   * Ownership: the caller owns the returned descriptor and must call its `release()`.
   */
  [ARROW_C_SCHEMA]?(): ArrowCDescriptor;
  /**
   * Hands over the schema and an ArrowArray, in the requested representation when the provider can give it.
   *
   * Ownership: the caller owns the returned descriptor and must call its `release()`.
   * @param requestedSchema - the schema asked for, or nothing.
   */
  [ARROW_C_ARRAY]?(requestedSchema?: unknown): ArrowCDescriptor;
  /**
   * Hands over the schema and an ArrowDeviceArray.
   *
   * Ownership: the caller owns the returned descriptor and must call its `release()`.
   * @param requestedSchema - the schema asked for (an object offering `Symbol.for('arrow.c_schema')`), or nothing.
   */
  [ARROW_C_DEVICE_ARRAY]?(requestedSchema?: unknown): ArrowCDescriptor;
  /**
   * Hands over an ArrowArrayStream.
   *
   * Ownership: the caller owns the returned descriptor and must call its `release()`.
   * @param requestedSchema - the schema asked for (an object offering `Symbol.for('arrow.c_schema')`), or nothing.
   */
  [ARROW_C_STREAM]?(requestedSchema?: unknown): ArrowCDescriptor;
  /**
   * Hands over an ArrowDeviceArrayStream.
   *
   * Ownership: the caller owns the returned descriptor and must call its `release()`.
   * @param requestedSchema - the schema asked for (an object offering `Symbol.for('arrow.c_schema')`), or nothing.
   */
  [ARROW_C_DEVICE_STREAM]?(requestedSchema?: unknown): ArrowCDescriptor;
}

const backstop = new FinalizationRegistry<() => void>((release) => {
  try {
    release();
  } catch {
    // Nobody to report to: the descriptor was dropped unconsumed.
  }
});

/**
 * Moves the structs at `from` (each of its kind) into fresh base structs of
 * the same space, and returns a descriptor owning those, naming the space's
 * memory and table. The originals are marked released.
 */
export function handOver(space: AddressSpace, structs: readonly [ReleasableStruct, number, 'schema' | 'array' | 'stream'][]): ArrowCDescriptor {
  const allocator = space.allocator;
  if (!(space instanceof MemorySpace) || allocator === null) {
    throw new ArrowCDeviceError(`${space.name}: structs there cannot be handed over (not a wasm memory with an allocator)`, EINVAL);
  }
  const s = space.structs;
  for (const [struct, ptr] of structs) {
    if (s.ptr(struct === 'ArrowDeviceArray' ? 'ArrowArray' : struct, ptr + (struct === 'ArrowDeviceArray' ? s.offsetOf('ArrowDeviceArray', 'array') : 0), 'release') === 0) {
      throw new ArrowCDeviceError(`${struct}: handed over or moved out already`, EINVAL);
    }
  }
  const moved = structs.map(([struct, ptr, role]) => {
    const size = s.size(struct);
    const to = allocator.alloc(size);
    space.bytes.copyWithin(to, ptr, ptr + size);
    const at = struct === 'ArrowDeviceArray' ? s.offsetOf('ArrowDeviceArray', 'array') : 0;
    s.setPtr(struct === 'ArrowDeviceArray' ? 'ArrowArray' : struct, ptr + at, 'release', 0);
    return [struct, to, role] as const;
  });
  let done = false;
  const release = () => {
    if (done) return;
    done = true;
    for (const [struct, ptr] of moved) {
      space.release(struct, ptr);
      allocator.free(ptr);
    }
  };
  const at = Object.fromEntries(moved.map(([, ptr, role]) => [role, ptr])) as Partial<Record<'schema' | 'array' | 'stream', number>>;
  const descriptor: ArrowCDescriptor = {
    memory: space.memory,
    table: space.wasmTable,
    schema: at.schema ?? 0,
    ...(at.array !== undefined ? { array: at.array } : {}),
    ...(at.stream !== undefined ? { stream: at.stream } : {}),
    allocator: { alloc: (size: number) => allocator.alloc(size), free: (ptr: number) => allocator.free(ptr) },
    release: () => {
      backstop.unregister(descriptor);
      release();
    },
  };
  backstop.register(descriptor, release, descriptor);
  return descriptor;
}

/** The protocol method of provider for `symbol`, or a clear error. */
export function descriptorOf(provider: object, symbol: symbol, what: string, requestedSchema?: unknown): ArrowCDescriptor {
  const method = (provider as Record<symbol, unknown>)[symbol];
  if (typeof method !== 'function') throw new ArrowCDeviceError(`${what}: the object has no [Symbol.for('${symbol.description}')]() method`, EINVAL);
  const d = (requestedSchema === undefined
    ? (method as () => ArrowCDescriptor).call(provider)
    : (method as (r: unknown) => ArrowCDescriptor).call(provider, requestedSchema));
  if (d === null || typeof d !== 'object' || !(d.memory instanceof WebAssembly.Memory) || typeof d.release !== 'function') {
    throw new ArrowCDeviceError(`${what}: [Symbol.for('${symbol.description}')]() did not return a descriptor { memory, table, schema, ..., release }`, EINVAL);
  }
  return d;
}
