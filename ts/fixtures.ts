// arrow-c-device/fixtures: the fixture corpus (docs/fixtures.md): its cases,
// their images and expected files, and the image parser.
export { caseImage, expectedIpc, fixtureFiles, stableJson, type CorpusFile, type CorpusOptions } from './fixtures/corpus.js';
export { corpusCases, fixtureCases, invalidFixtureCases } from './fixtures/cases.js';
export type { FixtureCase, Invalidity } from './fixtures/case.js';
export { imageSpace, parseFixtureImage, readScript, type FixtureImage, type ImageRoot, type ImageScript } from './fixtures/parse.js';
export type { LayoutName as FixtureLayout } from './fixtures/image.js';
