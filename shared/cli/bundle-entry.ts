/**
 * The entry of the bundled `dynamo-fn` CLI (`npm run build` -> dist/bundles/dynamo-fn.mjs, the
 * image's entrypoint): the same CLI as bin/dynamo-fn.js, compiled ahead of time into ES modules
 * with their dependencies, so it starts without transpiling TypeScript. `serve` otherwise
 * imports a function by path from functions/, which a bundle does not have: here each function
 * is a dynamic import, which the build splits into chunks, so `serve reconcile` loads
 * reconcile's code only. (The chart starts each function's own V8 startup snapshot instead,
 * ./function-snapshot.ts, of the same code as ./function-entries/.) Commands that need the repository (dev, kube-build, and the harness
 * behind them) are for the sources, not the bundle.
 * @module
 */
import { exitWhenDone, main } from './main.js';
import { useBundledFunctions } from './serve.js';

useBundledFunctions({
  admission: () => import('../../functions/admission/index.js'),
  cleanup: () => import('../../functions/cleanup/index.js'),
  profile: () => import('../../functions/profile/index.js'),
  reconcile: () => import('../../functions/reconcile/index.js'),
});
exitWhenDone(await main(process.argv.slice(2)));
