/**
 * The entry of the profile function's own bundle (`npm run build` -> dist/bundles/profile.mjs):
 * `dynamo-fn serve profile` with only this function compiled in (see ../function-entry.ts).
 * @module
 */
import * as profile from '../../../functions/profile/index.js';
import { runBundledFunction } from '../function-entry.js';

process.exitCode = await runBundledFunction('profile', profile);
