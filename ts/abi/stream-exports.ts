// The exports of csrc/stream/bindings.cpp (pull streams, C producers and
// consumers, the async pump), which core.ts hands out as an object that holds
// only these functions, never the module.

/** Pointers are wasm32 addresses; counts are numbers (exact up to 2^53). */
export interface StreamExports {
  streamLastError(): string;
  // Raw trampolines: call the struct's callback and return what it returns;
  // a callback that cannot be called is not: EINVAL (0 for get_last_error),
  // message in streamLastError. Void callbacks return 0 once called.
  arrayStreamCallGetSchema(stream: number, out: number): number;
  arrayStreamCallGetNext(stream: number, out: number): number;
  arrayStreamCallGetLastError(stream: number): number;
  arrayStreamCallRelease(stream: number): number;
  deviceArrayStreamCallGetSchema(stream: number, out: number): number;
  deviceArrayStreamCallGetNext(stream: number, out: number): number;
  deviceArrayStreamCallGetLastError(stream: number): number;
  deviceArrayStreamCallRelease(stream: number): number;
  asyncHandlerCallOnSchema(handler: number, schema: number): number;
  asyncHandlerCallOnNextTask(handler: number, task: number, metadata: number): number;
  asyncHandlerCallOnError(handler: number, code: number, message: number, metadata: number): number;
  asyncHandlerCallRelease(handler: number): number;
  asyncProducerCallRequest(producer: number, n: number): number;
  asyncProducerCallCancel(producer: number): number;
  asyncTaskCallExtractData(task: number, out: number): number;
  // Checked consumer calls (message in streamLastError) and moves.
  arrayStreamGetSchema(stream: number, out: number): number;
  arrayStreamGetNext(stream: number, out: number): number;
  deviceArrayStreamGetSchema(stream: number, out: number): number;
  deviceArrayStreamGetNext(stream: number, out: number): number;
  arrayStreamMove(src: number, dst: number): void;
  deviceArrayStreamMove(src: number, dst: number): void;
  arrayStreamRelease(stream: number): number;
  deviceArrayStreamRelease(stream: number): number;
  // Sources and lists (0 on failure).
  generatorSourceNew(nBatches: number, rowsPerBatch: number, deviceType: number, deviceId: number,
    failAt: number, failCode: number, hasMessage: boolean, failMessage: string, wrongDeviceAt: number): number;
  listSourceNew(list: number): number;
  sourceFree(source: number): void;
  listNew(): number;
  listFree(list: number): void;
  listLength(list: number): number;
  listDeviceType(list: number): number;
  listSchema(list: number): number;
  listArray(list: number, i: number): number;
  // The C pull producer and consumer.
  arrayStreamInitSource(stream: number, source: number): number;
  deviceArrayStreamInitSource(stream: number, source: number): number;
  arrayStreamDrain(stream: number, list: number, totals: number): number;
  deviceArrayStreamDrain(stream: number, list: number, totals: number): number;
  // The async device stream in C.
  asyncSetScheduler(fn: number): void;
  asyncPump(maxSteps: number): number;
  /** After asyncPump threw: the pump works again; the object cut short reports (code, message). */
  asyncPumpAbort(code: number, message: string): void;
  asyncPending(): number;
  asyncStats(out: number): void;
  asyncProducerStart(handler: number, source: number, metadata: number): number;
  asyncConsumerNew(window: number, extractLater: boolean, cancelAfter: number, failTaskAt: number, failSchema: boolean): number;
  asyncConsumerHandler(consumer: number): number;
  asyncConsumerFlags(consumer: number): number;
  asyncConsumerErrorCode(consumer: number): number;
  asyncConsumerErrorMessage(consumer: number): string;
  asyncConsumerMetadata(consumer: number): number;
  asyncConsumerTasks(consumer: number): number;
  asyncConsumerRequested(consumer: number): number;
  asyncConsumerList(consumer: number): number;
  asyncConsumerFree(consumer: number): void;
}

export const STREAM_EXPORTS: readonly (keyof StreamExports)[] = [
  'streamLastError',
  'arrayStreamCallGetSchema', 'arrayStreamCallGetNext', 'arrayStreamCallGetLastError', 'arrayStreamCallRelease',
  'deviceArrayStreamCallGetSchema', 'deviceArrayStreamCallGetNext', 'deviceArrayStreamCallGetLastError',
  'deviceArrayStreamCallRelease',
  'asyncHandlerCallOnSchema', 'asyncHandlerCallOnNextTask', 'asyncHandlerCallOnError', 'asyncHandlerCallRelease',
  'asyncProducerCallRequest', 'asyncProducerCallCancel', 'asyncTaskCallExtractData',
  'arrayStreamGetSchema', 'arrayStreamGetNext', 'deviceArrayStreamGetSchema', 'deviceArrayStreamGetNext',
  'arrayStreamMove', 'deviceArrayStreamMove', 'arrayStreamRelease', 'deviceArrayStreamRelease',
  'generatorSourceNew', 'listSourceNew', 'sourceFree', 'listNew', 'listFree', 'listLength', 'listDeviceType',
  'listSchema', 'listArray',
  'arrayStreamInitSource', 'deviceArrayStreamInitSource', 'arrayStreamDrain', 'deviceArrayStreamDrain',
  'asyncSetScheduler', 'asyncPump', 'asyncPumpAbort', 'asyncPending', 'asyncStats', 'asyncProducerStart',
  'asyncConsumerNew', 'asyncConsumerHandler', 'asyncConsumerFlags', 'asyncConsumerErrorCode',
  'asyncConsumerErrorMessage', 'asyncConsumerMetadata', 'asyncConsumerTasks', 'asyncConsumerRequested',
  'asyncConsumerList', 'asyncConsumerFree',
];
