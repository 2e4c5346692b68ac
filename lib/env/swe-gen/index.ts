/** swe-gen's public surface: seeded, procedural SWE tasks (tasks/README.md, "swe-gen"). */
export { writeSweGenSuite, assertSweGenSuitesDisjoint, type SweGenSuite, type SweGenSuiteRequest } from './suite.js';
export { generateSweGenTask, SWE_GEN_VERSION, type GeneratedTask, type SweGenMetadata, type SweGenBug } from './generate.js';
export { parseSweGenSuiteOptions, parseSweGenTaskOptions, type SweGenSuiteOptions, type SweGenTaskOptions } from './options.js';
export { BUG_KINDS as SWE_GEN_BUG_KINDS, type BugKind as SweGenBugKind } from './bugs.js';
export { SPLITS as SWE_GEN_SPLITS, type Split as SweGenSplit } from './splits.js';
