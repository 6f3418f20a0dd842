/**
 * The entry of the bundled `dynamo-fn` (`npm run build` -> dist/dynamo-fn.mjs): the same CLI as
 * bin/dynamo-fn.js, compiled ahead of time into one ES module with its dependencies, so a
 * function starts without transpiling TypeScript (scale from zero pays that on every cold
 * start: bench/cold-start.ts). The functions are imported statically here because `serve`
 * otherwise imports them by path from functions/, which a bundle does not have.
 * Commands that need the repository (dev, kube-build, and the harness behind them) are for the
 * sources, not the bundle.
 * @module
 */
import * as admission from '../../functions/admission/index.js';
import * as cleanup from '../../functions/cleanup/index.js';
import * as profile from '../../functions/profile/index.js';
import * as reconcile from '../../functions/reconcile/index.js';
import { main } from './main.js';
import { useBundledFunctions } from './serve.js';

useBundledFunctions({ admission, cleanup, profile, reconcile });
process.exitCode = await main(process.argv.slice(2));
