// The modules every plugin bundle imports, provided once in each plugin's runtime by the core
// (DESIGN.md §11: no module loading other than the SDK). Plugin bundles leave the SDK and zod
// out and read them from here, so the app carries one copy of zod, and the core compiles this
// file once a process and loads it into each runtime as bytecode.
import * as sdk from './index';
import * as zod from 'zod';

Object.defineProperty(globalThis, '__pkuModules', {
  value: Object.freeze({ '@pku-harness/sdk': sdk, zod }),
});
