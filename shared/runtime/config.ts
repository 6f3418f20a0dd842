/**
 * The function host's configuration: one zod schema over the process environment, parsed
 * once at start. A bad value stops the process before it listens, with a message naming the
 * key and what was expected (STYLE.md §22). Decisions get the parsed object, never `env`.
 *
 * | Variable | Default | Meaning |
 * | --- | --- | --- |
 * | `PORT` | `8080` | TCP port of the HTTP server (0 picks a free port) |
 * | `LOG_LEVEL` | `info` | pino level: fatal, error, warn, info, debug, trace, silent |
 * | `RESYNC_CONCURRENCY` | `8` | objects reconciled at once during a resync (1-1024) |
 * | `DRAIN_TIMEOUT_SECONDS` | `25` | how long shutdown waits for in-flight events (seconds) |
 * | `MAX_BODY_BYTES` | `3145728` (3 MiB) | larger request bodies get 413 |
 * | `BODY_TIMEOUT_SECONDS` | `5` | a body not complete this long after its headers gets 408 (seconds) |
 * | `MAX_IN_FLIGHT_EVENTS` | `64` | events handled at once; one more gets 429 with `Retry-After` |
 * | `LPX_ENABLED` | `false` | feature gate `lpx.enabled`: `true` or `false` |
 * | `LPX_MODEL_REGISTRY_URL` | unset | `lpx.modelRegistryURL`: an absolute path, `file://` or `gs://` URL (checked by the functions that use it) |
 * | `MODEL_EXPRESS_URL` | unset | `infrastructure.modelExpressURL`: the Model Express gRPC endpoint (`http://host:port`, `https://host:port` or a gRPC target) through which `gs://` LPX builds are downloaded and read |
 * | `DGDR_V1BETA2_ENABLED` | `false` | feature gate `dgdrV1Beta2.enabled` (DGDR v1beta2, Runs, Candidates) |
 * | `AISIMULATE_IMAGE` | `nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1` | image of a Run's Job when the Run names none |
 * | `KUBECONFIG` | unset | path of a kubeconfig file; unset means in-cluster config |
 * | `DGD_REPLICAS_MODIFIERS` | unset | comma-separated service-account usernames (`system:serviceaccount:<ns>:<name>`) allowed to change adapter-managed DGD replicas (admission) |
 *
 * The reconcile function's render settings ({@link parseRenderSettings}; the `dynamo-fn render`
 * flags of the same names):
 *
 * | Variable | Default | Meaning |
 * | --- | --- | --- |
 * | `OPERATOR_VERSION` | `1.6.1` | the operator version a DGD without `nvidia.com/dynamo-operator-origin-version` renders as (a semantic version, `v` allowed) |
 * | `GROVE_TERMINATION_DELAY` | `15m` | PodCliqueSet `template.terminationDelay` (a Go duration: `15m`, `1h30m`, `90s`) |
 * | `DISCOVERY_BACKEND` | `kubernetes` | the default discovery backend: `kubernetes` or `etcd` |
 * | `GANG_SCHEDULER` | `none` | gang scheduler integration: `none`, `kai` or `volcano` |
 * | `MPI_SSH_SECRET_NAME` | `mpi-run-ssh-secret` | the Secret with the TensorRT-LLM multinode SSH keys |
 *
 * An empty value counts as unset (Kubernetes manifests often template `value: ""`).
 *
 * @module
 * @see ../../../shared/DESIGN.md "Conventions" (configuration validated at start)
 */
import * as z from 'zod';
import { ConfigError, type ConfigIssue } from './errors.js';

/** 3 MiB: ApiServerSource in Resource mode ships whole objects, managedFields included. */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * The default image of a Run's Job: the Dynamo planner image of the release whose profiler
 * ships AISimulate (upstream-notes/profiler.md §3.1: ai-dynamo 1.6.1 pins aisimulate 0.13.0).
 */
export const DEFAULT_AISIMULATE_IMAGE = 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1';

/** The pino levels LOG_LEVEL accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function integerFromEnv(min: number, max: number) {
  const expected = `an integer from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, { error: expected })
    .transform(Number)
    .refine((value) => value >= min && value <= max, { error: expected });
}

function numberFromEnv(min: number, max: number) {
  const expected = `a number of seconds from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, { error: expected })
    .transform(Number)
    .refine((value) => value >= min && value <= max, { error: expected });
}

const booleanFromEnv = z
  .enum(['true', 'false'], { error: '"true" or "false"' })
  .transform((value) => value === 'true');

/** Comma-separated `system:serviceaccount:<namespace>:<name>` usernames (spaces around commas ignored). */
const serviceAccountListFromEnv = z
  .string()
  .transform((value) => value.split(',').map((v) => v.trim()).filter((v) => v !== ''))
  .pipe(z.array(z.string().regex(/^system:serviceaccount:[^:\s]+:[^:\s]+$/, { error: 'comma-separated system:serviceaccount:<namespace>:<name> usernames' })));

/** Treats `KEY=` like an absent key, so the default applies. */
function unsetWhenEmpty<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema);
}

/**
 * The environment variables the host reads, with their defaults. Input: strings from
 * `process.env`. Output: typed values (see {@link RuntimeConfig}).
 */
export const RuntimeEnvSchema = z.object({
  PORT: unsetWhenEmpty(integerFromEnv(0, 65535).default(8080)),
  LOG_LEVEL: unsetWhenEmpty(
    z.enum(LOG_LEVELS, { error: `one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  ),
  RESYNC_CONCURRENCY: unsetWhenEmpty(integerFromEnv(1, 1024).default(8)),
  // Below Kubernetes' default terminationGracePeriodSeconds (30) so we exit before SIGKILL.
  DRAIN_TIMEOUT_SECONDS: unsetWhenEmpty(numberFromEnv(0, 3600).default(25)),
  MAX_BODY_BYTES: unsetWhenEmpty(integerFromEnv(1, 1024 * 1024 * 1024).default(DEFAULT_MAX_BODY_BYTES)),
  // The broker sends a whole body at once; a slow one is a stuck or hostile client.
  BODY_TIMEOUT_SECONDS: unsetWhenEmpty(numberFromEnv(0.1, 300).default(5)),
  MAX_IN_FLIGHT_EVENTS: unsetWhenEmpty(integerFromEnv(1, 100_000).default(64)),
  LPX_ENABLED: unsetWhenEmpty(booleanFromEnv.default(false)),
  LPX_MODEL_REGISTRY_URL: unsetWhenEmpty(z.string().optional()),
  MODEL_EXPRESS_URL: unsetWhenEmpty(z.string().optional()),
  DGDR_V1BETA2_ENABLED: unsetWhenEmpty(booleanFromEnv.default(false)),
  AISIMULATE_IMAGE: unsetWhenEmpty(z.string({ error: 'an image reference' }).min(1).default(DEFAULT_AISIMULATE_IMAGE)),
  KUBECONFIG: unsetWhenEmpty(z.string({ error: 'a file path' }).optional()),
  DGD_REPLICAS_MODIFIERS: unsetWhenEmpty(serviceAccountListFromEnv.default([])),
});

/** The parsed configuration every handler receives in `deps.config`. */
export interface RuntimeConfig {
  /** TCP port; 0 asks the OS for a free one. */
  readonly port: number;
  readonly logLevel: LogLevel;
  /** Objects reconciled at once during a resync, >= 1. */
  readonly resyncConcurrency: number;
  /** How long shutdown waits for in-flight events, in seconds. */
  readonly drainTimeoutSeconds: number;
  /** Request bodies larger than this get 413, in bytes. */
  readonly maxBodyBytes: number;
  /** A body not complete this long after reading starts gets 408, in seconds. */
  readonly bodyTimeoutSeconds: number;
  /** Events handled at once (body reading included); one more gets 429. */
  readonly maxInFlightEvents: number;
  /** Feature gate `lpx.enabled` (LPXGraphDeployment and LPX components). */
  readonly lpxEnabled: boolean;
  /** `lpx.modelRegistryURL`; undefined: no registry (only absolute LPX build ids work). */
  readonly lpxModelRegistryUrl?: string | undefined;
  /** `infrastructure.modelExpressURL`: the Model Express gRPC endpoint `gs://` LPX builds are downloaded and read through; undefined: none. */
  readonly modelExpressUrl?: string | undefined;
  /** Path of a kubeconfig file; undefined means in-cluster configuration. */
  readonly kubeconfigPath: string | undefined;
  /** Feature gate `dgdrV1Beta2.enabled` (DGDR v1beta2, Runs, Candidates, trace claims). */
  readonly dgdrV1Beta2Enabled: boolean;
  /** Image of a Run's Job when the Run's spec names none. */
  readonly aisimulateImage: string;
  /** Service-account usernames allowed to change adapter-managed DGD replicas (admission). */
  readonly replicasModifiers: readonly string[];
}

function readEnv(env: Readonly<Record<string, string | undefined>>, key: PropertyKey | undefined): string | undefined {
  return typeof key === 'string' ? env[key] : undefined;
}

/**
 * Parses the host configuration from environment variables.
 * In: `env` (e.g. `process.env`); only the keys in the table above are read.
 * Out: a frozen {@link RuntimeConfig} with defaults applied.
 * Failures: throws {@link ConfigError} listing every bad key with what was expected.
 * Source: STYLE.md §22; DESIGN.md "Conventions". Pure.
 * @example
 * parseConfig({ PORT: '9090' }).port // 9090
 */
export function parseConfig(env: Readonly<Record<string, string | undefined>>): RuntimeConfig {
  const parsed = RuntimeEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issues: ConfigIssue[] = parsed.error.issues.map((issue) => {
      const key = issue.path[0];
      return {
        key: typeof key === 'string' ? key : '(root)',
        expected: issue.message,
        received: readEnv(env, key),
      };
    });
    throw new ConfigError(issues);
  }
  const values = parsed.data;
  return Object.freeze({
    port: values.PORT,
    logLevel: values.LOG_LEVEL,
    resyncConcurrency: values.RESYNC_CONCURRENCY,
    drainTimeoutSeconds: values.DRAIN_TIMEOUT_SECONDS,
    maxBodyBytes: values.MAX_BODY_BYTES,
    bodyTimeoutSeconds: values.BODY_TIMEOUT_SECONDS,
    maxInFlightEvents: values.MAX_IN_FLIGHT_EVENTS,
    lpxEnabled: values.LPX_ENABLED,
    ...(values.LPX_MODEL_REGISTRY_URL === undefined ? {} : { lpxModelRegistryUrl: values.LPX_MODEL_REGISTRY_URL }),
    ...(values.MODEL_EXPRESS_URL === undefined ? {} : { modelExpressUrl: values.MODEL_EXPRESS_URL }),
    kubeconfigPath: values.KUBECONFIG,
    dgdrV1Beta2Enabled: values.DGDR_V1BETA2_ENABLED,
    aisimulateImage: values.AISIMULATE_IMAGE,
    replicasModifiers: values.DGD_REPLICAS_MODIFIERS,
  });
}

/** The defaults alone, for tests and tools that build a host without an environment. */
export function defaultConfig(overrides: Partial<RuntimeConfig> = {}): RuntimeConfig {
  return Object.freeze({ ...parseConfig({}), ...overrides });
}

/** A metav1.Duration as Go's time.ParseDuration reads it (Grove's terminationDelay). */
const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;
/** `MAJOR.MINOR.PATCH`, a leading `v`, pre-release or build allowed (canonicalised to `MAJOR.MINOR.PATCH`). */
const SEMANTIC_VERSION = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)([-+][0-9A-Za-z.+-]*)?$/;
/** A DNS-1123 subdomain (a Secret name). */
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The render settings' environment variables (table above); every key optional, an unset key
 * keeps the renderer's default.
 */
export const RenderEnvSchema = z.object({
  OPERATOR_VERSION: unsetWhenEmpty(
    z
      .string()
      .trim()
      .regex(SEMANTIC_VERSION, { error: 'a semantic version such as "1.6.1"' })
      .transform((value) => value.replace(SEMANTIC_VERSION, '$1.$2.$3'))
      .optional(),
  ),
  GROVE_TERMINATION_DELAY: unsetWhenEmpty(z.string().trim().regex(GO_DURATION, { error: 'a duration such as 15m, 1h30m or 90s' }).optional()),
  DISCOVERY_BACKEND: unsetWhenEmpty(z.enum(['kubernetes', 'etcd'], { error: '"kubernetes" or "etcd"' }).optional()),
  GANG_SCHEDULER: unsetWhenEmpty(z.enum(['none', 'kai', 'volcano'], { error: '"none", "kai" or "volcano"' }).optional()),
  MPI_SSH_SECRET_NAME: unsetWhenEmpty(z.string().trim().regex(DNS1123_SUBDOMAIN, { error: 'a Secret name (a lowercase RFC 1123 subdomain)' }).optional()),
});

/** The render settings the environment sets (the shape of the renderer's `RenderConfig` fields); absent ones keep their defaults. */
export interface RenderSettings {
  readonly defaultOriginVersion?: string;
  readonly terminationDelay?: string;
  readonly discoveryBackend?: 'kubernetes' | 'etcd';
  readonly scheduler?: 'none' | 'kai' | 'volcano';
  readonly mpiSshSecretName?: string;
}

/**
 * Parses the reconcile function's render settings from environment variables.
 * In: `env`; only the keys of {@link RenderEnvSchema} are read. Out: a frozen
 * {@link RenderSettings} holding only the keys that are set (`OPERATOR_VERSION` canonicalised to
 * `MAJOR.MINOR.PATCH`). Failures: throws {@link ConfigError} listing every bad key with what was
 * expected, so the function stops before it listens. Source: STYLE.md §22. Pure.
 * @example
 * parseRenderSettings({ GANG_SCHEDULER: 'kai' }) // { scheduler: 'kai' }
 */
export function parseRenderSettings(env: Readonly<Record<string, string | undefined>>): RenderSettings {
  const parsed = RenderEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const key = issue.path[0];
        return { key: typeof key === 'string' ? key : '(root)', expected: issue.message, received: readEnv(env, key) };
      }),
    );
  }
  const values = parsed.data;
  const settings: Record<string, string> = {};
  if (values.OPERATOR_VERSION !== undefined) settings['defaultOriginVersion'] = values.OPERATOR_VERSION;
  if (values.GROVE_TERMINATION_DELAY !== undefined) settings['terminationDelay'] = values.GROVE_TERMINATION_DELAY;
  if (values.DISCOVERY_BACKEND !== undefined) settings['discoveryBackend'] = values.DISCOVERY_BACKEND;
  if (values.GANG_SCHEDULER !== undefined) settings['scheduler'] = values.GANG_SCHEDULER;
  if (values.MPI_SSH_SECRET_NAME !== undefined) settings['mpiSshSecretName'] = values.MPI_SSH_SECRET_NAME;
  return Object.freeze(settings) as RenderSettings;
}
