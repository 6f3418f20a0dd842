/**
 * The entry of the cleanup function's own bundle (`npm run build` -> dist/bundles/cleanup.mjs):
 * `dynamo-fn serve cleanup` with only this function compiled in (see ../function-entry.ts).
 * @module
 */
import * as cleanup from '../../../functions/cleanup/index.js';
import { runBundledFunction } from '../function-entry.js';

process.exitCode = await runBundledFunction('cleanup', cleanup);
