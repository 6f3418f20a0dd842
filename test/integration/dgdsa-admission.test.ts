/**
 * Who may change adapter-managed replicas, on the real API server: our validating webhook
 * (TLS, scoped to this file's namespace) with `replicasModifiers` naming the reconcile
 * function's service account, and the reconcile function running under that service account's
 * token (a TokenRequest), as it does in a cluster. A user's direct replica edit of a
 * `scalingAdapter` component is denied with the field path; the same change made through the
 * adapter's `/scale` reaches the component, written by the function. Source: upstream
 * internal/webhook/common.go CanModifyDGDReplicas and the v1beta1 validateReplicasChanges;
 * issue 8 part 4 ("admission rules on who may change the replicas of an adapter-managed
 * component, as upstream").
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { startAdmissionServer, type AdmissionServer } from '../../functions/admission/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { apiClient, serverSideApply, type ApiClient, type Obj } from '../support/api.js';
import { eventually } from '../support/eventually.js';

const LABEL = 'dynamo-fn.test/dgdsa-admission';
const WEBHOOK = 'dgd-replicas-validation-test';
const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
let api: ApiClient;
let namespace: string;
let admission: AdmissionServer;
let server: FunctionServer;
let bridge: EventBridge;
let dir: string;
let binding: string;

const dgdPath = (name = ''): string => `/apis/nvidia.com/v1beta1/namespaces/${namespace}/dynamographdeployments${name === '' ? '' : `/${name}`}`;
const adapterScalePath = (name: string): string => `/apis/nvidia.com/v1beta1/namespaces/${namespace}/dynamographdeploymentscalingadapters/${name}/scale`;

/** A kubeconfig file for `token` on the run's API server. */
async function tokenKubeconfig(token: string): Promise<string> {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('no current cluster');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.server, caData: cluster.caData }],
    users: [{ name: 'dynamo-reconcile', token }],
    contexts: [{ name: 'test', cluster: 'test', user: 'dynamo-reconcile' }],
    currentContext: 'test',
  });
  const file = join(dir, 'reconcile.kubeconfig');
  await writeFile(file, config.exportConfig(), { mode: 0o600 });
  return file;
}

beforeAll(async () => {
  api = apiClient();
  dir = await mkdtemp(join(tmpdir(), 'dynamo-fn-dgdsa-'));
  namespace = await createTestNamespace(kubeConfig, 'dgdsa-adm');
  expect((await api('PATCH', `/api/v1/namespaces/${namespace}`, { metadata: { labels: { [LABEL]: 'true' } } }, 'application/merge-patch+json')).status).toBe(200);

  // The reconcile function's identity, as infra/reconcile/rbac.yaml gives it in a cluster.
  expect((await api('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name: 'dynamo-reconcile' } })).status).toBe(201);
  binding = `dynamo-reconcile-${namespace}`;
  const bound = await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: binding },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'dynamo-reconcile', namespace }],
  });
  expect(bound.status, JSON.stringify(bound.body)).toBe(201);
  const token = await api('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/dynamo-reconcile/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  const principal = `system:serviceaccount:${namespace}:dynamo-reconcile`;

  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  admission = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false, replicasModifiers: [principal] }, log, shutdownDelaySeconds: 0 });
  const created = await api('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    metadata: { name: WEBHOOK },
    webhooks: [
      {
        name: 'validate.dynamographdeployments.nvidia.com',
        clientConfig: { url: `https://127.0.0.1:${admission.port}/validate/nvidia.com/v1beta1/dynamographdeployments`, caBundle: Buffer.from(certs.caPem).toString('base64') },
        rules: [{ apiGroups: ['nvidia.com'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['dynamographdeployments'], scope: 'Namespaced' }],
        namespaceSelector: { matchLabels: { [LABEL]: 'true' } },
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
      },
    ],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await eventually('the validating webhook to be active', async () => {
    const probe = await api('POST', `${dgdPath()}?dryRun=All`, { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'probe', annotations: { 'nvidia.com/grove-update-strategy': 'bogus' } }, spec: { components: [{ name: 'frontend', type: 'frontend', podTemplate: { spec: { containers: [{ name: 'main', image: 'f:1' }] } } }] } });
    return probe.status === 422 ? true : undefined;
  });

  server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath: await tokenKubeconfig(String((token.body['status'] as Obj)['token'])) }), log, host: '127.0.0.1' });
  bridge = await startEventBridge({
    kubeConfig,
    log,
    resyncIntervalSeconds: 0,
    retry: { retries: 3, backoffDelayMs: 50 },
    subscriptions: [{ name: 'reconcile', url: server.url, mode: 'Reference', kinds: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' }, { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentScalingAdapter' }] }],
  });
});

afterAll(async () => {
  await bridge?.stop();
  await server?.close();
  if (api !== undefined) {
    await api('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${WEBHOOK}`);
    await api('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding}`);
  }
  await admission?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('replicas of a scalingAdapter component', () => {
  const dgd = {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'guarded' },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
        { name: 'decode', type: 'decode', replicas: 1, scalingAdapter: {}, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
      ],
    },
  };

  it('a user edit is denied: "replicas cannot be modified directly when scaling adapter is enabled"', async () => {
    const applied = await serverSideApply(api, dgdPath('guarded'), { ...dgd, metadata: { name: 'guarded', namespace } }, 'kubectl');
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);
    const denied = await api('PATCH', dgdPath('guarded'), [{ op: 'replace', path: '/spec/components/1/replicas', value: 5 }], 'application/json-patch+json');
    expect(denied.status).toBe(422);
    expect(denied.body['message']).toBe(
      'admission webhook "validate.dynamographdeployments.nvidia.com" denied the request: DynamoGraphDeployment.nvidia.com "guarded" is invalid: spec.components[1].replicas: Forbidden: cannot be modified directly when scaling adapter is enabled; scale or update the related DynamoGraphDeploymentScalingAdapter instead',
    );
  });

  it('the same change through the adapter /scale is written by the reconcile function (an allowed principal)', async () => {
    await eventually('adapter guarded-decode', async () => ((await api('GET', adapterScalePath('guarded-decode'))).status === 200 ? true : undefined));
    // As `kubectl scale` does: a merge patch of the scale subresource, with no resourceVersion (a GET
    // then PUT lost to the reconcile function's concurrent status write of the adapter, 409, under load).
    const updated = await api('PATCH', adapterScalePath('guarded-decode'), { spec: { replicas: 5 } }, 'application/merge-patch+json');
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    await eventually('decode at 5 replicas', async () => {
      const object = await api('GET', dgdPath('guarded'));
      return (object.body['spec'] as { components: { name: string; replicas?: number }[] }).components.find((c) => c.name === 'decode')?.replicas === 5 ? true : undefined;
    });
  });
});
