// arrow-c-device/ipc: the Arrow IPC reader (file and stream formats, with
// its own bounds checks; LZ4-frame and ZSTD bodies) as raw arrays, and the
// registration of its decoders into apache-arrow's compressionRegistry.
export { readIpc } from './io/ipc/read.js';
export { registerCompression } from './io/ipc/arrow-codecs.js';
