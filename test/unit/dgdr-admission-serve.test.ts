/**
 * `dynamo-fn serve admission` and DGDR defaulting: OPERATOR_VERSION picks the default profiler
 * image (dgdr-reference "Profiler image version compatibility": nvcr.io/nvidia/ai-dynamo/dynamo-planner:<operatorVersion>,
 * canonical semver as upstream normalises `v1.2.0` -> `1.2.0`), DGDR_DEFAULT_IMAGE overrides it, and a
 * version that is not semver stops the process before it listens, naming the variable. So does a
 * GPU_EXPORTER_NAMESPACES that is not namespace names, in admission and in the profile function
 * (the two readers of hardware discovery's trusted exporter namespaces, issue 20 item 1).
 */
import { Writable } from 'node:stream';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { discoveryBudgetSeconds, serve } from '../../functions/admission/index.js';
import { depsWithKube as profileDepsWithKube } from '../../functions/profile/index.js';
import { createKube } from '../../shared/kube/index.js';
import { defaultConfig } from '../../shared/runtime/index.js';

function run(env: Record<string, string>) {
  const errors: string[] = [];
  const lines: Record<string, unknown>[] = [];
  let stop: (() => void) | undefined;
  let onStarted: ((line: Record<string, unknown>) => void) | undefined;
  const started = new Promise<Record<string, unknown>>((resolve) => (onStarted = resolve));
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n').filter((l) => l !== '')) {
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        if (line['msg'] === 'Started admission server') onStarted?.(line);
      }
      done();
    },
  });
  const exit = serve(['--plain-http', '--port', '0', '--shutdown-delay-seconds', '0'], {
    env,
    writeError: (text) => errors.push(text),
    logDestination,
    onShutdownSignal: (listener) => {
      stop = () => listener('SIGTERM');
      return () => undefined;
    },
  });
  return { exit, errors, started, stop: () => stop?.() };
}

async function mutatedImage(url: string): Promise<unknown> {
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u1', kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeploymentRequest' }, operation: 'CREATE', namespace: 'ns', object: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { model: 'Qwen/Qwen3-0.6B' } } },
  };
  const answer = await request(`${url}/mutate/nvidia.com/v1beta1/dynamographdeploymentrequests`, { method: 'POST', body: JSON.stringify(review), headers: { 'content-type': 'application/json' } });
  const body = (await answer.body.json()) as { response: { patch: string } };
  const patch = JSON.parse(Buffer.from(body.response.patch, 'base64').toString('utf8')) as { op: string; path: string; value: unknown }[];
  return patch.find((op) => op.op === 'add' && op.path === '/spec/image')?.value;
}

describe('serve admission: the DGDR default profiler image', () => {
  it.each<{ name: string; env: Record<string, string>; want: string }>([
    { name: 'OPERATOR_VERSION v1.7.0 -> dynamo-planner:1.7.0', env: { OPERATOR_VERSION: 'v1.7.0' }, want: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.7.0' },
    { name: 'unset -> the built-in operator version 1.6.1', env: {}, want: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1' },
    { name: 'DGDR_DEFAULT_IMAGE wins', env: { OPERATOR_VERSION: '1.7.0', DGDR_DEFAULT_IMAGE: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner-nightly:1.8.0-dev' }, want: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner-nightly:1.8.0-dev' },
  ])('$name', async ({ env, want }) => {
    const server = run(env);
    try {
      const started = await server.started;
      expect(await mutatedImage(String(started['url']))).toBe(want);
    } finally {
      server.stop();
    }
    expect(await server.exit).toBe(0);
  });

  it('an OPERATOR_VERSION that is not a semantic version stops the process, naming the variable', async () => {
    const server = run({ OPERATOR_VERSION: 'latest' });
    expect(await server.exit).toBe(1);
    expect(server.errors).toEqual(['dynamo-fn serve admission: OPERATOR_VERSION must be a semantic version such as "1.6.1", got "latest"\n']);
  });
});

describe('serve admission: the v1beta2 hardware discovery time budget', () => {
  it.each([
    { name: 'the chart default timeoutSeconds 10 leaves 8 s of scrapes', timeoutSeconds: 10, want: 8 },
    { name: 'the API maximum 30 leaves 28 s', timeoutSeconds: 30, want: 28 },
    { name: 'a 2 s timeout still scrapes for 1 s', timeoutSeconds: 2, want: 1 },
  ])('$name (admissionregistration v1 timeoutSeconds 1-30, less 2 s for the rest of the answer)', ({ timeoutSeconds, want }) => {
    expect(discoveryBudgetSeconds(timeoutSeconds)).toBe(want);
  });

  it('a WEBHOOK_TIMEOUT_SECONDS outside 1-30 stops the process, naming the variable', async () => {
    const server = run({ DGDR_V1BETA2_ENABLED: 'true', WEBHOOK_TIMEOUT_SECONDS: '45' });
    expect(await server.exit).toBe(1);
    expect(server.errors).toEqual(['dynamo-fn serve admission: WEBHOOK_TIMEOUT_SECONDS must be an integer from 1 to 30 (the webhooks\' timeoutSeconds), got "45"\n']);
  });

  it('a GPU_EXPORTER_NAMESPACES that is not namespace names or "*" stops the process, naming the variable (issue 20 item 1: the trusted exporter namespaces)', async () => {
    const server = run({ DGDR_V1BETA2_ENABLED: 'true', GPU_EXPORTER_NAMESPACES: 'gpu-operator,GPU_Operator' });
    expect(await server.exit).toBe(1);
    expect(server.errors).toEqual(['dynamo-fn serve admission: GPU_EXPORTER_NAMESPACES must be comma-separated namespace names (lowercase RFC 1123 labels), or "*" for any namespace, got "gpu-operator,GPU_Operator"\n']);
  });
});

describe('the profile function: the trusted exporter namespaces (issue 20 item 1)', () => {
  const base = { log: pino({ level: 'silent' }), now: () => new Date(), config: defaultConfig() };
  it('GPU_EXPORTER_NAMESPACES unset: gpu-operator, as the chart\'s default', () => {
    expect(profileDepsWithKube(base, createKube(new KubeConfig(), { fieldManager: 'test' }), {}).exporterNamespaces).toEqual(['gpu-operator']);
  });
  it('a named list is taken as given', () => {
    expect(profileDepsWithKube(base, createKube(new KubeConfig(), { fieldManager: 'test' }), { GPU_EXPORTER_NAMESPACES: 'gpu-operator,intel-xpu' }).exporterNamespaces).toEqual(['gpu-operator', 'intel-xpu']);
  });
  it('a bad value is a ConfigError naming the variable, so the function stops before it listens', () => {
    expect(() => profileDepsWithKube(base, createKube(new KubeConfig(), { fieldManager: 'test' }), { GPU_EXPORTER_NAMESPACES: 'gpu-*' })).toThrow(
      'invalid configuration: GPU_EXPORTER_NAMESPACES must be comma-separated namespace names (lowercase RFC 1123 labels), or "*" for any namespace, got "gpu-*"',
    );
  });
});
