// Reading the CLI's input files (Node only; ts/cli/input.ts, which the
// playground also uses in the browser, must not import node:fs).

import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { UsageError } from './input.js';

/** The file's bytes, gunzipped when they are gzip. */
export function readBytes(file: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`, { cause: e });
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      throw new UsageError(`cannot gunzip ${file}: ${(e as Error).message}`, { cause: e });
    }
  }
  return bytes;
}
