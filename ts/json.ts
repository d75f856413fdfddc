// arrow-c-device/json: Arrow integration JSON, read into raw arrays and
// written from them.
export { readIntegrationJson, type IntegrationFile } from './io/json/read.js';
export { writeIntegrationJson } from './io/json/write.js';
