/**
 * `dynamo-fn serve FUNCTION [--port N]`: runs one function. Loads `functions/<name>/index.ts`;
 * if that module exports `serve(argv)` (the admission webhook serves HTTPS AdmissionReview
 * itself) the command hands over to it, otherwise it runs the module's default-exported
 * FunctionDefinition in the CloudEvents host (`shared/runtime`) until SIGTERM or SIGINT, then
 * drains and exits 0.
 * @module
 */
import { parseArgs } from 'node:util';
import type { DestinationStream } from 'pino';
import {
  ConfigError,
  parseConfig,
  serveUntilSignal,
  startFunctionServer,
  type FunctionDefinition,
  type RuntimeConfig,
} from '../runtime/index.js';

/** The functions `serve` can run (DESIGN.md "Shape"). */
export const FUNCTION_NAMES = ['admission', 'reconcile', 'profile', 'cleanup'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/**
 * `dynamo-fn serve FUNCTION --help` is answered here, not by the dispatcher: a function that
 * serves itself (admission) has its own options, so the help comes from its module.
 */
export const handlesHelp = true;

export const summary = 'Run one function: the CloudEvents host for reconcile, profile, cleanup (admission serves itself)';

export const usage = `Usage: dynamo-fn serve FUNCTION [--port N]

Runs one function until SIGTERM or SIGINT, then drains in-flight events and exits 0
(a second signal exits 1 at once). FUNCTION is one of: ${FUNCTION_NAMES.join(', ')}.
It is loaded from functions/<FUNCTION>/index.ts. A module that exports serve(argv) runs
itself with the remaining arguments (admission: HTTPS AdmissionReview); the others run in
the CloudEvents host:

  POST /      CloudEvents (binary or structured): ApiServerSource events, dev.dynamo-fn.resync
  /healthz    liveness        /readyz   readiness (503 while starting or draining)
  /metrics    Prometheus text

Options:
  --port N        TCP port; overrides PORT (0 picks a free port)
  -h, --help      Show this help; with FUNCTION, that function's own help when it has one
                  (dynamo-fn serve admission --help)

Environment:
  PORT                   TCP port (default 8080)
  LOG_LEVEL              fatal, error, warn, info, debug, trace or silent (default info)
  RESYNC_CONCURRENCY     objects reconciled at once during a resync, 1-1024 (default 8)
  DRAIN_TIMEOUT_SECONDS  how long shutdown waits for in-flight events (default 25)
  MAX_BODY_BYTES         larger event bodies get 413 (default 3145728, 3 MiB)
  BODY_TIMEOUT_SECONDS   a body not complete this long after its headers gets 408 (default 5)
  MAX_IN_FLIGHT_EVENTS   events handled at once; one more gets 429 (default 64)
  LPX_ENABLED            feature gate lpx.enabled: true or false (default false)
  LPX_MODEL_REGISTRY_URL lpx.modelRegistryURL: an absolute path, file:// or gs:// URL (default unset)
  MODEL_EXPRESS_URL      the Model Express gRPC endpoint of gs:// LPX builds (default unset)
  DGDR_V1BETA2_ENABLED   feature gate dgdrV1Beta2.enabled: true or false (default false)
  AISIMULATE_IMAGE       image of a v1beta2 Run's Job when the Run names none
  KUBECONFIG             kubeconfig path (default: in-cluster configuration)

  reconcile renders as 'dynamo-fn render' with these flags does: OPERATOR_VERSION (default
  1.6.1), GROVE_TERMINATION_DELAY (15m), DISCOVERY_BACKEND (kubernetes or etcd),
  GANG_SCHEDULER (none, kai or volcano), MPI_SSH_SECRET_NAME (mpi-run-ssh-secret).
  profile also reads OPERATOR_IMAGE, DCGM_METRICS_ENDPOINT_TEMPLATE,
  INTEL_XPU_METRICS_ENDPOINT_TEMPLATE and GPU_EXPORTER_NAMESPACES (the namespaces whose
  DaemonSet-controlled exporter pods hardware discovery trusts, comma separated; default
  gpu-operator; "*" any); admission's own are in 'dynamo-fn serve admission --help'.

A bad value stops the command before it listens, naming the variable; exit code 1.`;

/** What `run` needs from the process; tests pass their own. */
export interface ServeDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Imports `functions/<name>/index.js`. Rejects with {@link FunctionNotImplementedError} when
   * that module itself does not exist, with the import's own error otherwise.
   */
  readonly importFunction: (name: FunctionName) => Promise<unknown>;
  /** Where help goes (the process's stdout). */
  readonly writeOutput: (text: string) => void;
  /** Where errors before logging starts go (the process's stderr). */
  readonly writeError: (text: string) => void;
  /** Where JSON logs go; undefined means stdout. */
  readonly logDestination: DestinationStream | undefined;
  /** Calls `listener` once on the first SIGTERM/SIGINT; returns an unsubscribe function. */
  readonly onShutdownSignal: (listener: (signal: string) => void) => () => void;
  /** Interface to listen on; undefined means all. */
  readonly host: string | undefined;
}

/** A function this release does not ship: its `functions/<name>/index` module does not exist. */
export class FunctionNotImplementedError extends Error {
  readonly functionName: string;
  constructor(functionName: string, options?: ErrorOptions) {
    super(`function ${functionName} is not part of this release`, options);
    this.name = 'FunctionNotImplementedError';
    this.functionName = functionName;
  }
}

/**
 * Whether `error` is Node's failure to find the module at `moduleUrl` itself, as opposed to a
 * module it imports: code `ERR_MODULE_NOT_FOUND` and `url` (the file URL Node could not find)
 * equal to it. Pure.
 * Source: Node.js errors, ERR_MODULE_NOT_FOUND (lib/internal/modules/esm/resolve.js sets `url`).
 */
export function isMissingModule(error: unknown, moduleUrl: URL): boolean {
  if (!(error instanceof Error)) return false;
  const { code, url } = error as Error & { readonly code?: unknown; readonly url?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' && url === moduleUrl.href;
}

/**
 * Function modules compiled into a bundle, which has no functions/ folder to import from: the
 * CLI bundle (dist/bundles/dynamo-fn.mjs, see ./bundle-entry.ts) loads each from its own chunk
 * when `serve` names it; a function's own bundle (./function-entry.ts) carries its one module.
 * Empty when running from the sources.
 */
const bundledFunctions = new Map<string, () => Promise<unknown>>();

/**
 * Called once by a bundle's entry, before `main`/`run`: the function modules it carries, each
 * as the module itself or as a loader (a dynamic import the bundler splits into a chunk).
 */
export function useBundledFunctions(modules: Readonly<Partial<Record<FunctionName, unknown>>>): void {
  for (const [name, module] of Object.entries(modules)) {
    bundledFunctions.set(name, typeof module === 'function' ? (module as () => Promise<unknown>) : () => Promise.resolve(module));
  }
}

/**
 * The real process: env, stdout help, stderr, stdout logs, SIGTERM/SIGINT (a second one exits 1).
 * `functionsUrl` is the folder holding `<name>/index.js`; tests point it elsewhere.
 */
export function processServeDeps(functionsUrl: URL = new URL('../../functions/', import.meta.url)): ServeDeps {
  return {
    env: process.env,
    importFunction: async (name) => {
      const bundled = bundledFunctions.get(name);
      if (bundled !== undefined) return bundled();
      const moduleUrl = new URL(`${name}/index.js`, functionsUrl);
      try {
        return (await import(moduleUrl.href)) as unknown;
      } catch (error) {
        if (isMissingModule(error, moduleUrl)) throw new FunctionNotImplementedError(name, { cause: error });
        throw error;
      }
    },
    writeOutput: (text) => process.stdout.write(text),
    writeError: (text) => process.stderr.write(text),
    logDestination: undefined,
    onShutdownSignal(listener) {
      let received = 0;
      const onSignal = (signal: NodeJS.Signals): void => {
        received += 1;
        if (received === 1) listener(signal);
        else process.exit(1);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      return () => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      };
    },
    host: undefined,
  };
}

function isFunctionName(value: string): value is FunctionName {
  return (FUNCTION_NAMES as readonly string[]).includes(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A loose structural check: the module's types are checked by tsc, this catches a wrong export. */
function isFunctionDefinition(value: unknown): value is FunctionDefinition {
  return (
    isRecord(value) &&
    typeof value['name'] === 'string' &&
    Array.isArray(value['routes']) &&
    typeof value['init'] === 'function'
  );
}

/** The message and its cause chain, `a: b: c`, so a wrapped failure still names its root. */
function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  // Bounded: a cause chain can be circular.
  for (let depth = 0; current !== undefined && depth < 10; depth += 1) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
}

/** Splits off FUNCTION (the first positional argument, wherever it stands) and spots --help/-h. */
function splitFunctionArgument(
  argv: readonly string[],
): { readonly name: string | undefined; readonly rest: readonly string[]; readonly isHelp: boolean } {
  const { tokens } = parseArgs({
    args: [...argv],
    options: { port: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const isHelp = tokens.some((token) => token.kind === 'option' && token.name === 'help');
  const positional = tokens.find((token) => token.kind === 'positional');
  if (positional === undefined) return { name: undefined, rest: argv, isHelp };
  return { name: positional.value, rest: argv.filter((_, index) => index !== positional.index), isHelp };
}

/**
 * Runs `dynamo-fn serve`. Resolves to the exit code: 0 after a signal-initiated drain or after
 * help, 1 on a usage error, an unavailable function, a bad configuration or a failed start
 * (the message carries the cause chain: `cannot start function reconcile: cannot initialise
 * function reconcile: <cause>`). `serve --help` prints {@link usage}; `serve FUNCTION --help`
 * prints the function module's own `usage` export when it has one, else {@link usage}.
 */
export async function run(argv: readonly string[], deps: ServeDeps = processServeDeps()): Promise<number> {
  const fail = (message: string): number => {
    deps.writeError(`dynamo-fn serve: ${message}\n`);
    return 1;
  };

  const { name, rest, isHelp } = splitFunctionArgument(argv);
  if (isHelp && name === undefined) {
    deps.writeOutput(`${usage}\n`);
    return 0;
  }
  if (name === undefined) return fail(`missing FUNCTION (one of ${FUNCTION_NAMES.join(', ')})\n\n${usage}`);
  if (!isFunctionName(name)) {
    return fail(`unknown function "${name}"; expected one of ${FUNCTION_NAMES.join(', ')}`);
  }

  let loaded: unknown;
  try {
    loaded = await deps.importFunction(name);
  } catch (error) {
    if (error instanceof FunctionNotImplementedError) return fail(error.message);
    return fail(`function ${name} is not available: ${describeError(error)}`);
  }
  if (!isRecord(loaded)) return fail(`function ${name} is not available: its module exports nothing`);

  if (isHelp) {
    const ownUsage = loaded['usage'];
    deps.writeOutput(`${typeof ownUsage === 'string' ? ownUsage : usage}\n`);
    return 0;
  }

  const ownServe = loaded['serve'];
  if (typeof ownServe === 'function') {
    return (ownServe as (args: readonly string[]) => Promise<number>)(rest);
  }

  let port: string | undefined;
  try {
    ({
      values: { port },
    } = parseArgs({ args: [...rest], options: { port: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    return fail(`${describeError(error)}\nRun 'dynamo-fn serve --help' for the options.`);
  }

  const definition = loaded['default'];
  if (!isFunctionDefinition(definition)) {
    return fail(`function ${name} is not available: functions/${name}/index.ts does not default-export a FunctionDefinition`);
  }

  let config: RuntimeConfig;
  try {
    config = parseConfig(port === undefined ? deps.env : { ...deps.env, PORT: port });
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }

  const result = await serveUntilSignal({
    logLevel: config.logLevel,
    logDestination: deps.logDestination,
    onShutdownSignal: deps.onShutdownSignal,
    start: (log, registry) => startFunctionServer(definition, { config, log, registry, host: deps.host }),
  });
  return result.ok ? 0 : fail(`cannot start function ${name}: ${describeError(result.error)}`);
}
