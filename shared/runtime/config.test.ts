import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES, parseConfig, parseRenderSettings } from './config.js';
import { ConfigError } from './errors.js';

function configErrorOf(env: Readonly<Record<string, string>>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('parseConfig accepted the environment');
}

describe('parseConfig', () => {
  it('applies every default to an empty environment', () => {
    expect(parseConfig({})).toEqual({
      port: 8080,
      logLevel: 'info',
      resyncConcurrency: 8,
      drainTimeoutSeconds: 25,
      maxBodyBytes: 3 * 1024 * 1024,
      bodyTimeoutSeconds: 5,
      maxInFlightEvents: 64,
      lpxEnabled: false,
      kubeconfigPath: undefined,
      dgdrV1Beta2Enabled: false,
      aisimulateImage: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1',
      replicasModifiers: [],
    });
    expect(DEFAULT_MAX_BODY_BYTES).toBe(3_145_728);
  });

  it('reads every key it documents', () => {
    expect(
      parseConfig({
        PORT: '9090',
        LOG_LEVEL: 'debug',
        RESYNC_CONCURRENCY: '3',
        DRAIN_TIMEOUT_SECONDS: '1.5',
        MAX_BODY_BYTES: '1024',
        BODY_TIMEOUT_SECONDS: '0.5',
        MAX_IN_FLIGHT_EVENTS: '7',
        LPX_ENABLED: 'true',
        KUBECONFIG: '/etc/kube/config',
        DGDR_V1BETA2_ENABLED: 'true',
        AISIMULATE_IMAGE: 'registry.example/aisimulate:0.13.0',
        DGD_REPLICAS_MODIFIERS: 'system:serviceaccount:dynamo-system:dynamo-reconcile, system:serviceaccount:ops:scaler',
        UNRELATED: 'ignored',
      }),
    ).toEqual({
      port: 9090,
      logLevel: 'debug',
      resyncConcurrency: 3,
      drainTimeoutSeconds: 1.5,
      maxBodyBytes: 1024,
      bodyTimeoutSeconds: 0.5,
      maxInFlightEvents: 7,
      lpxEnabled: true,
      kubeconfigPath: '/etc/kube/config',
      dgdrV1Beta2Enabled: true,
      aisimulateImage: 'registry.example/aisimulate:0.13.0',
      replicasModifiers: ['system:serviceaccount:dynamo-system:dynamo-reconcile', 'system:serviceaccount:ops:scaler'],
    });
  });

  it('treats an empty value as unset, so the default applies', () => {
    expect(parseConfig({ PORT: '', LPX_ENABLED: '', KUBECONFIG: '' })).toMatchObject({
      port: 8080,
      lpxEnabled: false,
      kubeconfigPath: undefined,
    });
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(parseConfig({}))).toBe(true);
  });

  it.each<{ name: string; env: Readonly<Record<string, string>>; key: string; expected: string }>([
    { name: 'PORT not a number', env: { PORT: 'http' }, key: 'PORT', expected: 'an integer from 0 to 65535' },
    { name: 'PORT out of range', env: { PORT: '70000' }, key: 'PORT', expected: 'an integer from 0 to 65535' },
    { name: 'PORT negative', env: { PORT: '-1' }, key: 'PORT', expected: 'an integer from 0 to 65535' },
    {
      name: 'LOG_LEVEL unknown',
      env: { LOG_LEVEL: 'loud' },
      key: 'LOG_LEVEL',
      expected: 'one of fatal, error, warn, info, debug, trace, silent',
    },
    {
      name: 'RESYNC_CONCURRENCY zero',
      env: { RESYNC_CONCURRENCY: '0' },
      key: 'RESYNC_CONCURRENCY',
      expected: 'an integer from 1 to 1024',
    },
    {
      name: 'DRAIN_TIMEOUT_SECONDS with a unit',
      env: { DRAIN_TIMEOUT_SECONDS: '30s' },
      key: 'DRAIN_TIMEOUT_SECONDS',
      expected: 'a number of seconds from 0 to 3600',
    },
    {
      name: 'MAX_BODY_BYTES fractional',
      env: { MAX_BODY_BYTES: '1.5' },
      key: 'MAX_BODY_BYTES',
      expected: 'an integer from 1 to 1073741824',
    },
    { name: 'LPX_ENABLED yes', env: { LPX_ENABLED: 'yes' }, key: 'LPX_ENABLED', expected: '"true" or "false"' },
    { name: 'LPX_ENABLED capitalised', env: { LPX_ENABLED: 'True' }, key: 'LPX_ENABLED', expected: '"true" or "false"' },
    {
      name: 'DGD_REPLICAS_MODIFIERS a bare name',
      env: { DGD_REPLICAS_MODIFIERS: 'dynamo-reconcile' },
      key: 'DGD_REPLICAS_MODIFIERS',
      expected: 'comma-separated system:serviceaccount:<namespace>:<name> usernames',
    },
  ])('rejects $name, naming the key and what was expected', ({ env, key, expected }) => {
    const error = configErrorOf(env);
    const received = Object.values(env)[0];
    expect(error.issues).toEqual([{ key, expected, received }]);
    expect(error.message).toBe(`invalid configuration: ${key} must be ${expected}, got ${JSON.stringify(received)}`);
  });

  it('lists every bad key at once', () => {
    const error = configErrorOf({ PORT: 'x', LOG_LEVEL: 'loud', LPX_ENABLED: '1' });
    expect(error.keys).toEqual(['PORT', 'LOG_LEVEL', 'LPX_ENABLED']);
    expect(error.message).toMatchInlineSnapshot(
      `"invalid configuration: PORT must be an integer from 0 to 65535, got "x"; LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"; LPX_ENABLED must be "true" or "false", got "1""`,
    );
  });
});

describe('parseRenderSettings (the reconcile function\'s render settings)', () => {
  it('an empty environment sets nothing, so every renderer default applies', () => {
    expect(parseRenderSettings({ PORT: '9090' })).toEqual({});
  });

  it('reads every key it documents, into the render config fields of the same meaning as the `dynamo-fn render` flags', () => {
    expect(
      parseRenderSettings({ OPERATOR_VERSION: 'v1.7.0-rc1', GROVE_TERMINATION_DELAY: '1h30m', DISCOVERY_BACKEND: 'etcd', GANG_SCHEDULER: 'kai', MPI_SSH_SECRET_NAME: 'mpi-keys' }),
    ).toEqual({ defaultOriginVersion: '1.7.0', terminationDelay: '1h30m', discoveryBackend: 'etcd', scheduler: 'kai', mpiSshSecretName: 'mpi-keys' });
  });

  it('treats an empty value as unset', () => {
    expect(parseRenderSettings({ OPERATOR_VERSION: '', GANG_SCHEDULER: '' })).toEqual({});
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(parseRenderSettings({ GANG_SCHEDULER: 'volcano' }))).toBe(true);
  });

  it.each<{ name: string; env: Readonly<Record<string, string>>; key: string; expected: string }>([
    { name: 'OPERATOR_VERSION latest', env: { OPERATOR_VERSION: 'latest' }, key: 'OPERATOR_VERSION', expected: 'a semantic version such as "1.6.1"' },
    { name: 'GROVE_TERMINATION_DELAY without a unit', env: { GROVE_TERMINATION_DELAY: '15' }, key: 'GROVE_TERMINATION_DELAY', expected: 'a duration such as 15m, 1h30m or 90s' },
    { name: 'DISCOVERY_BACKEND nats', env: { DISCOVERY_BACKEND: 'nats' }, key: 'DISCOVERY_BACKEND', expected: '"kubernetes" or "etcd"' },
    { name: 'GANG_SCHEDULER KAI', env: { GANG_SCHEDULER: 'KAI' }, key: 'GANG_SCHEDULER', expected: '"none", "kai" or "volcano"' },
    { name: 'MPI_SSH_SECRET_NAME with capitals', env: { MPI_SSH_SECRET_NAME: 'MPI_Keys' }, key: 'MPI_SSH_SECRET_NAME', expected: 'a Secret name (a lowercase RFC 1123 subdomain)' },
  ])('rejects $name, naming the key and what was expected', ({ env, key, expected }) => {
    let error: unknown;
    try {
      parseRenderSettings(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([{ key, expected, received: Object.values(env)[0] }]);
  });
});
