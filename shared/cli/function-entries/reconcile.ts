/**
 * The entry of the reconcile function's own bundle (`npm run build` -> dist/bundles/reconcile.mjs):
 * `dynamo-fn serve reconcile` with only this function compiled in (see ../function-entry.ts).
 * @module
 */
import * as reconcile from '../../../functions/reconcile/index.js';
import { runBundledFunction } from '../function-entry.js';

process.exitCode = await runBundledFunction('reconcile', reconcile);
