// arrow-c-device/inspect: the struct tree of an export as data and as text,
// a batch's or a device array's tree in either layout, and the samples (the
// CLI's inspect and demo, the playground).
export { bufferRole, flagNames, structTree } from './inspect/tree.js';
export type { RegionKind, StructTree, TreeBuffer, TreeField, TreeNode, TreeOptions, TreeRegion } from './inspect/tree.js';
export { treeText } from './inspect/text.js';
export { batchTree, deviceTree } from './inspect/batch.js';
export type { BatchTree, InspectLayout } from './inspect/batch.js';
export { demoTable, sample, samples } from './inspect/samples.js';
export type { Sample } from './inspect/samples.js';
