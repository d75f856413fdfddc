// arrow-c-device/ipc: the Arrow IPC reader (file and stream formats, with
// its own bounds checks) as raw arrays.
export { readIpc } from './io/ipc/read.js';
