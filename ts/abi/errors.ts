// The one error class of the library: every failure, from the C core or from
// TypeScript checks, surfaces as an ArrowCDeviceError with an errno-style code.

// Errno values as the C core sees them. Emscripten's libc uses the WASI
// numbering, which differs from Linux (EINVAL is 28 here, 22 on Linux), so
// these are the values the wasm exports actually return.
/** Errno EBUSY (10 in the WASI numbering): data read before its sync event was waited on. */
export const EBUSY = 10;
/** Errno EIO (29): a producer's I/O failure, a stream that failed. */
export const EIO = 29;
/** Errno EINVAL (28): invalid input, a malformed or released struct. */
export const EINVAL = 28;
/** Errno ENODEV (43): no such device. */
export const ENODEV = 43;
/** Errno ENOMEM (48): out of memory. */
export const ENOMEM = 48;
/**
 * Errno ENOSYS (52): not supported here (a callback that cannot be called, an array not on the CPU).
 */
export const ENOSYS = 52;
/** Errno ERANGE (68): a value out of range. */
export const ERANGE = 68;
/** Errno EOVERFLOW (61): a size or count that overflows. */
export const EOVERFLOW = 61;

const ERRNO_NAMES: ReadonlyMap<number, string> = new Map([
  [EBUSY, 'EBUSY'],
  [ENODEV, 'ENODEV'],
  [EIO, 'EIO'],
  [EINVAL, 'EINVAL'],
  [ENOMEM, 'ENOMEM'],
  [ENOSYS, 'ENOSYS'],
  [ERANGE, 'ERANGE'],
  [EOVERFLOW, 'EOVERFLOW'],
]);

/**
 * The symbolic name of an errno code ('EINVAL'), or `errno N` when unknown.
 *
 * Ownership: pure; nothing to release.
 * @param code - the errno.
 */
export function errnoName(code: number): string {
  return ERRNO_NAMES.get(code) ?? `errno ${code}`;
}

/**
 * The one error class of the library: every failure of the C core or of the TypeScript checks, with an errno-style `code`, a message that names the place and says what was expected and found, and the struct `path` when there is one. A wrong argument type is a `TypeError` instead.
 */
export class ArrowCDeviceError extends Error {
  /** Always `'ArrowCDeviceError'`. */
  override readonly name = 'ArrowCDeviceError';
  /** Errno-style code (Emscripten numbering, see above). */
  readonly code: number;
  /** Where in a schema or array tree the problem is ("children[1].dictionary"). */
  readonly path?: string;

  /**
   * Makes an error.
   *
   * Ownership: nothing to release.
   * @param message - what was expected and what was found, where.
   * @param code - the errno (EINVAL by default).
   * @param path - the struct path, when there is one.
   */
  constructor(message: string, code: number = EINVAL, path?: string) {
    super(message);
    this.code = code;
    if (path !== undefined) this.path = path;
  }
}
