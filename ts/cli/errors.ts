// How a failure leaves the command line: its exit code, its one line on
// stderr, and with --json the JSON object on stdout. Exit codes: 0 success,
// 1 a check failed (a mismatch, a leak, a failed conversion: an
// ArrowCDeviceError or a CheckFailed), 2 a UsageError (bad usage, a file that
// cannot be read, input that is not Arrow data). Anything else is a bug in
// this program and is thrown on, with its stack.

import { constants } from 'node:os';
import { ArrowCDeviceError } from '../index.js';
import { UsageError } from './input.js';

/** A check that failed without an ArrowCDeviceError (the bench's readers disagreeing, its leak check): exit 1. */
export class CheckFailed extends Error {
  override readonly name = 'CheckFailed';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** 2 for a UsageError, 1 for an ArrowCDeviceError or CheckFailed, null for anything else (a bug). */
export function exitCodeOf(e: unknown): 1 | 2 | null {
  if (e instanceof UsageError) return 2;
  if (e instanceof ArrowCDeviceError || e instanceof CheckFailed) return 1;
  return null;
}

/** The error on one line, as stderr shows it after "arrow-c-device: ". */
export const errorLine = (e: Error): string => e.message.replace(/\s*\n\s*/g, ' ');

export interface ErrorJson {
  /** The class: UsageError (exit 2), ArrowCDeviceError or CheckFailed (exit 1). */
  name: string;
  /**
   * The errno name of the error behind it ('EINVAL', 'ENOENT', ...), or
   * 'ERR_USAGE' for a command line this program refuses; null when there is none.
   */
  code: string | null;
  /** The errno number, when there is one. */
  errno: number | null;
  /** The one line also printed on stderr. */
  message: string;
  /** From an ArrowCDeviceError: where in the struct tree ("children[1].dictionary"), the validation level, the layout. */
  path?: string;
  level?: string;
  layout?: string;
}

/**
 * The JSON form of a failure. The fields are copied from the error itself or
 * the error it wraps (`cause`): an ArrowCDeviceError's code, errno, path,
 * level and layout, or a file system error's code (its errno given as the
 * positive errno number, as the C core's are).
 */
export function errorJson(e: Error): ErrorJson {
  // Not instanceof Error: an error from another realm (Node's own, under a test runner's vm) is one too.
  const cause = typeof e.cause === 'object' && e.cause !== null ? e.cause : undefined;
  const from = e instanceof ArrowCDeviceError ? e : cause instanceof ArrowCDeviceError ? cause : undefined;
  if (from !== undefined) {
    // The library error's own JSON form (its details only when set), with this failure's name and line.
    return { ...from.toJSON(), name: e.name, message: errorLine(e) };
  }
  const system = cause as { code?: unknown; syscall?: unknown } | undefined;
  let code: string | null = null;
  let errno: number | null = null;
  if (system !== undefined && typeof system.code === 'string' && typeof system.syscall === 'string') {
    code = system.code;
    errno = (constants.errno as Record<string, number>)[system.code] ?? null;
  } else if (e instanceof UsageError) code = 'ERR_USAGE';
  return { name: e.name, code, errno, message: errorLine(e) };
}
