// Release discipline for everything this library holds in wasm memory: an
// idempotent release(), [Symbol.dispose], and a FinalizationRegistry backstop
// that is unregistered on explicit release.

/** Symbol.dispose, or the registered symbol runtimes without it use for `using`. */
export const dispose: typeof Symbol.dispose = Symbol.dispose ?? (Symbol.for('Symbol.dispose') as typeof Symbol.dispose);
/** Symbol.asyncDispose, or the registered symbol runtimes without it use for `await using`. */
export const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol.for('Symbol.asyncDispose') as typeof Symbol.asyncDispose);

const backstop = new FinalizationRegistry<() => void>((cleanup) => {
  try {
    cleanup();
  } catch {
    // A finalizer has nobody to report to; the handle was leaked by its owner.
  }
});

/** Something that owns memory in the core until release() is called. */
export abstract class Handle {
  #cleanup: (() => void) | null;

  /** cleanup must not reference the handle itself (it runs after it is collected). */
  protected constructor(cleanup: () => void) {
    this.#cleanup = cleanup;
    backstop.register(this, cleanup, this);
  }

  /** Whether release() has been called. */
  get released(): boolean {
    return this.#cleanup === null;
  }

  /** Frees what the handle owns; calling it again does nothing. */
  release(): void {
    const cleanup = this.#cleanup;
    if (cleanup === null) return;
    this.#cleanup = null;
    backstop.unregister(this);
    cleanup();
  }

  /**
   * Runs `more` after the handle's own cleanup, on release() or by the
   * backstop (for what the handle's value depends on but does not own, such
   * as a protocol descriptor holding the structs it reads in place).
   */
  chain(more: () => void): void {
    const cleanup = this.#cleanup;
    if (cleanup === null) {
      more();
      return;
    }
    const both = () => {
      try {
        cleanup();
      } finally {
        more();
      }
    };
    backstop.unregister(this);
    this.#cleanup = both;
    backstop.register(this, both, this);
  }

  [dispose](): void {
    this.release();
  }
}
