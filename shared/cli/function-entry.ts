/**
 * What each function's own bundle runs (`npm run build` -> dist/bundles/<name>.mjs; the entries
 * are ./function-entries/<name>.ts): `dynamo-fn serve <name>` with that one function compiled
 * in, so a cold start loads only what the function reaches and no TypeScript transpiler
 * (`node /app/dist/bundles/<name>.mjs ARGS`, ARGS as after `serve <name>`). The chart starts
 * the function's V8 startup snapshot instead, which runs this same function through
 * ./function-snapshot.ts (`node --snapshot-blob /app/dist/bundles/<name>.blob -- ARGS`).
 * Code needed only under a gate or a setting stays behind the function's own dynamic imports,
 * which the build splits into chunks loaded when that gate or setting is on.
 * @module
 */
import { run, useBundledFunctions, type FunctionName } from './serve.js';

/**
 * Runs `serve <name> ...argv` with `module` as the function's module. Resolves to the exit
 * code, as `dynamo-fn serve` does.
 */
export async function runBundledFunction(name: FunctionName, module: unknown, argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  useBundledFunctions({ [name]: module });
  return run([name, ...argv]);
}
