// The one error class of the library: every failure, from the C core or from
// TypeScript checks, surfaces as an ArrowCDeviceError with the errno's name
// as `code`, its number as `errno`, and where known the struct path, the
// validation level and the struct layout.

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

/** The errno names the library uses; another number is named `E<number>` ('E123'). */
export type ErrnoName = 'EBUSY' | 'EIO' | 'EINVAL' | 'ENODEV' | 'ENOMEM' | 'ENOSYS' | 'ERANGE' | 'EOVERFLOW' | `E${number}`;

const ERRNO_NAMES: ReadonlyMap<number, ErrnoName> = new Map<number, ErrnoName>([
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
 * The symbolic name of an errno number ('EINVAL'), or `E<number>` ('E123') when it has none here.
 *
 * Ownership: pure; nothing to release.
 * @param errno - the errno number.
 */
export function errnoName(errno: number): ErrnoName {
  return ERRNO_NAMES.get(errno) ?? `E${errno}`;
}

/** The validation levels, as the import options name them (the C core's 0 to 3). */
export type ErrorLevel = 'none' | 'minimal' | 'default' | 'full';

/** A struct layout: wasm32 (4-byte pointers) or LP64 (8-byte pointers). */
export type ErrorLayout = 'wasm32' | 'lp64';

/** What an error may say besides its message and errno, each only when it applies. */
export interface ErrorDetails {
  /** Where in a schema or array tree ("root.children[1].dictionary", "array.children[0].buffers[1]"). */
  readonly path?: string;
  /** The validation level of a failed validation. */
  readonly level?: ErrorLevel;
  /** The layout of the structs read (an image's, or another space's). */
  readonly layout?: ErrorLayout;
}

/** The fields of an ArrowCDeviceError as JSON.stringify writes them. */
export interface ArrowCDeviceErrorJSON extends ErrorDetails {
  /** Always `'ArrowCDeviceError'`. */
  readonly name: 'ArrowCDeviceError';
  /** The errno's name. */
  readonly code: ErrnoName;
  /** The errno number. */
  readonly errno: number;
  /** The message: what was expected and what was found, where. */
  readonly message: string;
}

/**
 * The one error class of the library: every failure of the C core or of the TypeScript checks, with the errno's name as `code`, its number as `errno`, a message that names the place and says what was expected and found, and where known the struct `path`, the validation `level` and the struct `layout`. A wrong argument type or an unknown option key is a `TypeError` instead.
 */
export class ArrowCDeviceError extends Error {
  /** Always `'ArrowCDeviceError'`. */
  override readonly name = 'ArrowCDeviceError';
  /** The errno's name ('EINVAL', 'ENOMEM', ...; 'E123' for a number without one): compare with `e.code === 'EINVAL'`. */
  readonly code: ErrnoName;
  /** The errno number (Emscripten/WASI numbering, see above): what crosses the C ABI. */
  readonly errno: number;
  /** Where in a schema or array tree the problem is ("root.children[1].dictionary"), when there is a place. */
  declare readonly path?: string;
  /** The validation level, for a failed validation. */
  declare readonly level?: ErrorLevel;
  /** The struct layout read, where one is involved ('wasm32', 'lp64'). */
  declare readonly layout?: ErrorLayout;

  /**
   * `details` may be the path alone (a string).
   *
   * Ownership: nothing to release.
   * @param message - what was expected and what was found, where.
   * @param errno - the errno number (EINVAL by default).
   * @param details - the path, level and layout, each when it applies.
   */
  constructor(message: string, errno: number = EINVAL, details: ErrorDetails | string = {}) {
    super(message);
    if (typeof details === 'string') details = { path: details };
    this.errno = errno;
    this.code = errnoName(errno);
    // Set only when known (the fields are `declare`d): an absent one is absent, not undefined.
    if (details.path !== undefined && details.path !== '') this.path = details.path;
    if (details.level !== undefined) this.level = details.level;
    if (details.layout !== undefined) this.layout = details.layout;
  }

  /**
   * name, code, errno, message and the details that are set: JSON.stringify(e) writes these.
   *
   * Ownership: a plain object; nothing to release.
   */
  toJSON(): ArrowCDeviceErrorJSON {
    return {
      name: this.name, code: this.code, errno: this.errno, message: this.message,
      ...(this.path === undefined ? {} : { path: this.path }),
      ...(this.level === undefined ? {} : { level: this.level }),
      ...(this.layout === undefined ? {} : { layout: this.layout }),
    };
  }
}

/**
 * The same failure with `context: ` before its message: errno, path, level
 * and layout are kept (an errno may replace the old one).
 */
export function withContext(e: ArrowCDeviceError, context: string, errno: number = e.errno): ArrowCDeviceError {
  return new ArrowCDeviceError(`${context}: ${e.message}`, errno, e);
}

/** The name of a layout, from its pointer size. */
export function layoutName(layout: { readonly pointerSize: number }): ErrorLayout {
  return layout.pointerSize === 8 ? 'lp64' : 'wasm32';
}
