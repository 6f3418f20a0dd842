/**
 * The entry of the admission function's own bundle (`npm run build` -> dist/bundles/admission.mjs):
 * `dynamo-fn serve admission` with only this function compiled in (see ../function-entry.ts).
 * @module
 */
import * as admission from '../../../functions/admission/index.js';
import { runBundledFunction } from '../function-entry.js';

process.exitCode = await runBundledFunction('admission', admission);
