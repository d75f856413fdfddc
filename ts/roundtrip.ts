// arrow-c-device/roundtrip: round trips of a file's batches (IPC or
// integration JSON) through the interfaces and of streams, with summaries
// (the CLI's roundtrip).
export { isJson, readOwn, roundtripRaw, roundtripTable, type ReaderName, type RoundtripOptions, type RoundtripSummary } from './roundtrip/roundtrip.js';
export { roundtripStream, roundtripStreamRaw } from './roundtrip/stream.js';
export type { RawStreamRoundtripOptions, StreamRoundtripOptions, StreamRoundtripSummary, Via } from './roundtrip/stream.js';
