/**
 * Least privilege, proven for the admission function (issue 9 part 4): it has a token only with
 * dgdrV1Beta2.enabled, bound to the chart's `dynamo-admission` ClusterRole
 * (infra/chart/templates/admission/rbac.yaml, rendered by `helm template`), for v1beta2 hardware
 * discovery. The DGDR v1beta2 mutating webhook runs with the Node lister and the exporter reader
 * the `serve admission` command builds (functions/admission/index.ts: a kube client from
 * KUBECONFIG listing Nodes, and `createExporterLoader` listing the DCGM and Intel XPU exporter
 * pods cluster-wide and the GPU Operator's; no exporter runs here, so the labels decide),
 * here from a TokenRequest token of a ServiceAccount bound to exactly that role, through a
 * loopback recorder that notes the verb and resource of every request (test/support/rbac.ts).
 * The AdmissionReview is posted as the API server would post it. Then:
 *
 * - the webhook discovers the same hardware as with the admin's view of the Nodes, and the DGD
 *   validating webhook judges a creation's typed topology against the Grove ClusterTopologyBinding
 *   it names as with the admin's view (a pack domain wider than the graph's is refused with
 *   upstream's text), and the API server refused nothing: the role is enough;
 * - every verb the role grants was used: none is beyond what the function uses.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterTopologyReader, createExporterLoader, nodeFacts, startAdmissionServer, type AdmissionServer } from '../../functions/admission/index.js';
import { KubeConfig } from '@kubernetes/client-node';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { chartClusterRoles, forbidden, grants, kubeconfigFor, label, serviceAccountWith, startRequestRecorder, usedGrants, type PolicyRule, type RequestRecorder } from '../support/rbac.js';

const log = pino({ level: 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'rbac-test' });

let namespace = '';
let tmpDir = '';
let rules: PolicyRule[] = [];
let recorder: RequestRecorder;
let nodeNames: string[] = [];
/** A Grove ClusterTopologyBinding (cluster-scoped; levels broadest first), unique to this run. */
const BINDING = `rbac-admission-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  rules = (await chartClusterRoles('templates/admission/rbac.yaml', { 'dgdrV1Beta2.enabled': 'true' })).get('dynamo-admission') ?? [];
  namespace = await createTestNamespace(kubeConfig, 'rbac-admission');
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-rbac-admission-'));
  recorder = await startRequestRecorder(kubeConfig);
  nodeNames = await createGpuNodes(admin, parseGpuFleet('2xNVIDIA-H200:8'), 'rbac-admission-gpu');
  await admin.create({
    apiVersion: 'grove.io/v1alpha1',
    kind: 'ClusterTopologyBinding',
    metadata: { name: BINDING },
    spec: { levels: [{ domain: 'zone', key: 'topology.kubernetes.io/zone' }, { domain: 'rack', key: 'example.com/rack' }, { domain: 'host', key: 'kubernetes.io/hostname' }] },
  });
});

afterAll(async () => {
  await recorder?.close();
  for (const name of nodeNames) await admin.delete({ apiVersion: 'v1', kind: 'Node', name });
  await admin.delete({ apiVersion: 'grove.io/v1alpha1', kind: 'ClusterTopologyBinding', name: BINDING });
  await rm(tmpDir, { recursive: true, force: true });
});

/** Posts a CREATE AdmissionReview of `object` (as the API server sends one) to `path` of the admission server; out: the review's `response`. */
async function postCreateReview(server: AdmissionServer, path: string, version: string, kind: string, resource: string, object: { metadata: { name: string } }): Promise<{ allowed?: unknown; patch?: string; status?: { message?: unknown } } | undefined> {
  const group = 'nvidia.com';
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group, version, kind },
      resource: { group, version, resource },
      requestKind: { group, version, kind },
      requestResource: { group, version, resource },
      name: object.metadata.name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'kubectl' },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(review) });
  return ((await response.json()) as { response?: { allowed?: unknown; patch?: string; status?: { message?: unknown } } }).response;
}

/** Posts a CREATE AdmissionReview of a v1beta2 request without hardware to the mutating webhook; out: the decoded JSON Patch. */
async function mutate(server: AdmissionServer): Promise<{ allowed: unknown; patch: unknown }> {
  const object = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'discover', namespace }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, workload: { static: { isl: 4000, osl: 1000 } } } };
  const answer = await postCreateReview(server, '/mutate/nvidia.com/v1beta2/dynamographdeploymentrequests', 'v1beta2', 'DynamoGraphDeploymentRequest', 'dynamographdeploymentrequests', object);
  return { allowed: answer?.allowed, patch: answer?.patch === undefined ? undefined : (JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8')) as unknown) };
}

/** Posts a CREATE AdmissionReview of a DGD whose worker packs wider (zone) than the graph (rack) to the validating webhook; out: allowed and the denial's message. */
async function validateTopology(server: AdmissionServer): Promise<{ allowed: unknown; message: unknown }> {
  const object = {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'packed', namespace, generation: 1 },
    spec: {
      backendFramework: 'vllm',
      topologyConstraint: { clusterTopologyName: BINDING, packDomain: 'rack' },
      components: [{ name: 'worker', type: 'worker', replicas: 1, topologyConstraint: { packDomain: 'zone' }, podTemplate: { spec: { containers: [{ name: 'main', image: 'runtime:1.6.1' }] } } }],
    },
  };
  const answer = await postCreateReview(server, '/validate/nvidia.com/v1beta1/dynamographdeployments', 'v1beta1', 'DynamoGraphDeployment', 'dynamographdeployments', object);
  return { allowed: answer?.allowed, message: answer?.status?.message };
}

/** The admission server with the Node lister and exporter reader `serve admission` builds from a kubeconfig (functions/admission/index.ts). */
async function admissionWith(kubeconfigPath: string | undefined): Promise<AdmissionServer> {
  const config = new KubeConfig();
  if (kubeconfigPath === undefined) config.loadFromString(kubeConfig.exportConfig());
  else config.loadFromFile(kubeconfigPath);
  const kube = createKube(config, { fieldManager: 'dynamo-admission' });
  return startAdmissionServer({
    port: 0,
    host: '127.0.0.1',
    config: { lpxEnabled: false },
    log,
    shutdownDelaySeconds: 0,
    listNodes: async () => (await kube.list('v1', 'Node')).map(nodeFacts),
    loadExporters: createExporterLoader(kube, { budgetSeconds: 8 }),
    readClusterTopology: createClusterTopologyReader(kube),
  });
}

describe('admission ServiceAccount (chart templates/admission/rbac.yaml, dgdrV1Beta2.enabled)', () => {
  let done = false;

  it('is enough: with a TokenRequest token of the chart role, v1beta2 hardware discovery gives what it gives with the admin\'s view of the Nodes, a DGD creation\'s pack domain is judged against its ClusterTopologyBinding as with the admin\'s view, and nothing is refused', async () => {
    expect(rules.length).toBeGreaterThan(0);
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'admission', rules);
    const kubeconfigPath = await kubeconfigFor(kubeConfig, namespace, serviceAccount, tmpDir, recorder.url);
    const asAdmin = await admissionWith(undefined);
    const asServiceAccount = await admissionWith(kubeconfigPath);
    try {
      const want = await mutate(asAdmin);
      const got = await mutate(asServiceAccount);
      expect(want.allowed).toBe(true);
      // Discovery persisted the hardware (an add of spec.hardware, whatever the fleet holds).
      expect(JSON.stringify(want.patch)).toContain('hardware');
      expect(got).toEqual(want);
      const topologyWant = await validateTopology(asAdmin);
      expect(topologyWant).toEqual({
        allowed: false,
        message: 'DynamoGraphDeployment.nvidia.com "packed" is invalid: spec.components[0].topologyConstraint.packDomain: Invalid value: "zone": must be equal to or narrower than the deployment-level domain "rack"',
      });
      expect(await validateTopology(asServiceAccount)).toEqual(topologyWant);
      expect(forbidden(recorder.requests)).toEqual([]);
    } finally {
      await asAdmin.close();
      await asServiceAccount.close();
    }
    done = true;
  });

  it('grants no verb beyond what the function uses: every granted verb was sent by some request', () => {
    expect(done).toBe(true);
    const used = usedGrants(recorder.requests);
    expect(grants(rules).map(label).filter((g) => !used.has(g))).toEqual([]);
  });
});
