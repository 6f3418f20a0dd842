/**
 * The product's version and the `dynamo_fn_build_info` metric, and the one metric prefix every
 * function's metrics carry (Prometheus naming: `<prefix><name>_<unit>`, a `_info` gauge of 1
 * for build labels).
 * @module
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Gauge, type Registry } from 'prom-client';

/** The prefix of every metric our functions define (the process and Node.js collector metrics keep their standard names). */
export const METRIC_PREFIX = 'dynamo_fn_';

/** What `--version` prints and `dynamo_fn_build_info` carries. */
export interface BuildInfo {
  /** The package version (package.json), e.g. `0.1.0`. */
  readonly version: string;
  /** `process.version`, e.g. `v24.11.0`. */
  readonly nodeVersion: string;
}

let cached: BuildInfo | undefined;

/**
 * Reads the version from the package.json two folders up from this file (the repository root,
 * or /app in the image). Failures: throws when package.json is missing or has no version.
 */
/** Set by `npm run build` (scripts/build.mjs, esbuild `define`): a bundle has no package.json beside it. */
declare const __DYNAMO_FN_VERSION__: string | undefined;

export function buildInfo(): BuildInfo {
  if (cached === undefined && typeof __DYNAMO_FN_VERSION__ === 'string') cached = { version: __DYNAMO_FN_VERSION__, nodeVersion: process.version };
  if (cached === undefined) {
    const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json');
    const version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version;
    if (typeof version !== 'string') throw new Error(`cannot read the version from ${file}`);
    cached = { version, nodeVersion: process.version };
  }
  return cached;
}

/** Registers `dynamo_fn_build_info{function,version,nodejs_version} 1` on `registry`. */
export function registerBuildInfo(registry: Registry, functionName: string): void {
  const info = buildInfo();
  const gauge = new Gauge({
    name: `${METRIC_PREFIX}build_info`,
    help: 'Build information of the running function: 1, labelled with the version and the Node.js version',
    labelNames: ['function', 'version', 'nodejs_version'] as const,
    registers: [registry],
  });
  gauge.set({ function: functionName, version: info.version, nodejs_version: info.nodeVersion }, 1);
}
