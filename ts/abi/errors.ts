// The one error class of the library: every failure, from the C core or from
// TypeScript checks, surfaces as an ArrowCDeviceError with an errno-style code.

// Errno values as the C core sees them. Emscripten's libc uses the WASI
// numbering, which differs from Linux (EINVAL is 28 here, 22 on Linux), so
// these are the values the wasm exports actually return.
export const EBUSY = 10;
export const EIO = 29;
export const EINVAL = 28;
export const ENODEV = 43;
export const ENOMEM = 48;
export const ENOSYS = 52;
export const ERANGE = 68;
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

/** The symbolic name of an errno code ('EINVAL'), or `errno N` when unknown. */
export function errnoName(code: number): string {
  return ERRNO_NAMES.get(code) ?? `errno ${code}`;
}

export class ArrowCDeviceError extends Error {
  override readonly name = 'ArrowCDeviceError';
  /** Errno-style code (Emscripten numbering, see above). */
  readonly code: number;
  /** Where in a schema or array tree the problem is ("children[1].dictionary"). */
  readonly path?: string;

  constructor(message: string, code: number = EINVAL, path?: string) {
    super(message);
    this.code = code;
    if (path !== undefined) this.path = path;
  }
}
