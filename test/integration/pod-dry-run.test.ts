/**
 * Every rendered pod spec is a valid Pod: for each DGD of ../shared/corpus/dgd/ and examples/,
 * each clique's `podSpec` is created as a Pod on the real API server with `dryRun=All` and
 * `fieldValidation=Strict` (Pod validation and admission run, nothing is stored), so a mount
 * without a volume, a bad probe or an unknown field fails here. The ServiceAccounts the
 * rendered pods name (planner-serviceaccount, epp-serviceaccount, authored ones) are created
 * first, as the installation would; the ServiceAccount admission plugin refuses a Pod naming
 * a missing one.
 *
 * Three corpus manifests are templates whose placeholders (`<GPU_NODE_POOL>`, `<NAMESPACE>`,
 * `${DYNAMO_RDMA_RESOURCE}`) are not valid label values, names or resource names; they are
 * filled in as a user would before applying (FILLED_PLACEHOLDERS), so the test judges what
 * rendering adds, not the template's blanks.
 *
 * Strict input: the unknown fields `dynamo-fn render` reports are the ones the API server's
 * strict field validation reports, for DGD fields (our CRD) and for pod template fields (the
 * Pod schema).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { formatIssue, parseDgd } from '../../shared/api/index.js';
import { unknownDgdFields } from '../../shared/cli/strict-fields.js';
import { renderDgd } from '../../shared/domain/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { repoRoot, sharedDir } from '../support/paths.js';

type Obj = Record<string, unknown>;
interface ApiAnswer {
  readonly status: number;
  readonly body: Obj;
}

function apiClient(): (method: Dispatcher.HttpMethod, path: string, body?: unknown) => Promise<ApiAnswer> {
  const kubeConfig = testKubeConfig();
  const cluster = kubeConfig.getCurrentCluster();
  const user = kubeConfig.getCurrentUser();
  if (cluster === null || user === null) throw new Error('the kubeconfig has no current cluster or user');
  const ca = cluster.caData === undefined ? undefined : Buffer.from(cluster.caData, 'base64').toString('utf8');
  const dispatcher = new Agent({ connect: { ca } });
  return async (method, path, body) => {
    const response = await request(`${cluster.server}${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${user.token ?? ''}`, 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: (await response.body.json()) as Obj };
  };
}

/** Values a user fills into the corpus templates' placeholders before applying them. */
const FILLED_PLACEHOLDERS: Readonly<Record<string, string>> = {
  '<GPU_NODE_POOL>': 'gpu-pool',
  '<NAMESPACE>': 'inference',
  '${DYNAMO_RDMA_RESOURCE}': 'rdma/ib',
};
const fillPlaceholders = (text: string) => Object.entries(FILLED_PLACEHOLDERS).reduce((out, [placeholder, value]) => out.split(placeholder).join(value), text);

/** DGD documents of a directory, `<file>#<index>`, with the rendered cliques' pod specs. */
function renderedCliques(dir: string): { name: string; cliques: { name: string; labels: Record<string, string>; podSpec: Obj }[] }[] {
  const out: { name: string; cliques: { name: string; labels: Record<string, string>; podSpec: Obj }[] }[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    parseAllDocuments(fillPlaceholders(readFileSync(resolve(dir, file), 'utf8'))).forEach((document, index) => {
      const object = document.toJS() as Obj | null;
      if (object?.['kind'] !== 'DynamoGraphDeployment') return;
      const parsed = parseDgd(object);
      if (!parsed.ok) throw new Error(`${file}#${index}: ${parsed.issues.map(formatIssue).join('; ')}`);
      const rendered = renderDgd(parsed.dgd);
      // The one corpus DGD that opts out of Grove renders nothing (test/unit/corpus.test.ts).
      if (!rendered.ok) return;
      const pcs = rendered.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { name: string; labels: Record<string, string>; spec: { podSpec: Obj } }[] } } } | undefined;
      out.push({ name: `${file}#${index}`, cliques: (pcs?.spec.template.cliques ?? []).map((c) => ({ name: c.name, labels: c.labels, podSpec: c.spec.podSpec })) });
    });
  }
  return out;
}

/**
 * v1beta1 DGDs with the GPU memory service and failover in shapes the corpus lacks: intra-pod
 * GMS with failover on a multinode SGLang worker with a frontend sidecar and an extra GMS
 * client, and on a multinode TensorRT-LLM worker (its SSH port staggered per engine); inter-pod
 * GMS with a shadow engine (weight-server clique, hostPath socket directory, root init container).
 */
const GMS_FAILOVER_DGDS: readonly { readonly name: string; readonly object: Obj }[] = [
  {
    name: 'inline/sglang-multinode-gms-failover-sidecars',
    object: {
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'sglang-gms', annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' } },
      spec: {
        backendFramework: 'sglang',
        components: [
          {
            name: 'decode',
            type: 'decode',
            multinode: { nodeCount: 2 },
            frontendSidecar: 'sidecar-frontend',
            experimental: { gpuMemoryService: { mode: 'IntraPod', extraClientContainers: ['weights-probe'] }, failover: { mode: 'IntraPod' }, checkpoint: { enabled: true } },
            podTemplate: {
              spec: {
                containers: [
                  { name: 'main', image: 'sglang-runtime:1.6.0', command: ['python3', '-m', 'dynamo.sglang'], args: ['--model-path', 'Qwen/Qwen3-0.6B', '--tp', '8'], resources: { limits: { 'nvidia.com/gpu': '8' } } },
                  { name: 'sidecar-frontend', image: 'sglang-runtime:1.6.0' },
                  { name: 'weights-probe', image: 'busybox:1.36', command: ['sleep', 'infinity'] },
                ],
              },
            },
          },
        ],
      },
    },
  },
  {
    name: 'inline/trtllm-multinode-gms-failover',
    object: {
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'trtllm-gms', annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' } },
      spec: {
        backendFramework: 'trtllm',
        components: [
          {
            name: 'worker',
            type: 'worker',
            multinode: { nodeCount: 2 },
            experimental: { gpuMemoryService: { deviceClassName: 'gpu.nvidia.com' }, failover: {} },
            podTemplate: { spec: { containers: [{ name: 'main', image: 'tensorrtllm-runtime:1.6.0', command: ['python3', '-m', 'dynamo.trtllm'], args: ['--model-path', 'm'], resources: { limits: { 'nvidia.com/gpu': '4' } } }] } },
          },
        ],
      },
    },
  },
  {
    name: 'interpod/vllm-gms-failover-shadows',
    object: {
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'vllm-interpod', annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' } },
      spec: {
        backendFramework: 'vllm',
        components: [
          {
            name: 'VllmWorker',
            type: 'worker',
            replicas: 2,
            experimental: { gpuMemoryService: { mode: 'InterPod' }, failover: { mode: 'InterPod', numShadows: 1 } },
            podTemplate: { spec: { containers: [{ name: 'main', image: 'vllm-runtime:1.6.0', command: ['python3', '-m', 'dynamo.vllm'], args: ['--model', 'm', '--load-format', 'gms'], resources: { limits: { 'nvidia.com/gpu': '2', memory: '64Gi' } } }] } },
          },
        ],
      },
    },
  },
];

function renderedInline(): { name: string; cliques: { name: string; labels: Record<string, string>; podSpec: Obj }[] }[] {
  return GMS_FAILOVER_DGDS.map(({ name, object }) => {
    const parsed = parseDgd(object);
    if (!parsed.ok) throw new Error(`${name}: ${parsed.issues.map(formatIssue).join('; ')}`);
    const rendered = renderDgd(parsed.dgd);
    if (!rendered.ok) throw new Error(`${name}: ${rendered.issues.map(formatIssue).join('; ')}`);
    const pcs = rendered.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { name: string; labels: Record<string, string>; spec: { podSpec: Obj } }[] } } };
    return { name, cliques: pcs.spec.template.cliques.map((c) => ({ name: c.name, labels: c.labels, podSpec: c.spec.podSpec })) };
  });
}

const corpus = [...renderedCliques(resolve(sharedDir, 'corpus', 'dgd')), ...renderedCliques(resolve(repoRoot, 'examples')).map((c) => ({ ...c, name: `examples/${c.name}` })), ...renderedInline()];

let api: ReturnType<typeof apiClient>;
let namespace: string;

beforeAll(async () => {
  api = apiClient();
  namespace = await createTestNamespace(testKubeConfig(), 'pod-dry-run');
  const accounts = new Set(corpus.flatMap((d) => d.cliques.map((c) => c.podSpec['serviceAccountName']).filter((n): n is string => typeof n === 'string')));
  for (const name of accounts) {
    const created = await api('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
});

describe('rendered clique pod specs pass the API server\'s Pod validation (dry-run create, strict fields)', () => {
  it('renders the corpus and the examples (41 corpus files, 4 examples) into cliques', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(45);
    expect(corpus.every((d) => d.cliques.length > 0)).toBe(true);
  });

  it.each(corpus)('$name', async ({ cliques }) => {
    const failures: string[] = [];
    for (const clique of cliques) {
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${clique.name}-0`.slice(0, 63), labels: clique.labels }, spec: clique.podSpec };
      const answer = await api('POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All&fieldValidation=Strict`, pod);
      if (answer.status !== 201) failures.push(`${clique.name}: ${answer.status} ${String(answer.body['message'])}`);
    }
    expect(failures).toEqual([]);
  });

  it('the GMS and failover pods under test carry what they add: engines, the gms-server sidecar and the shared DRA claim (corpus vllm-agg-failover-gms.yaml and the inline DGDs)', () => {
    const gmsPods = corpus.filter((d) => d.name.startsWith('vllm-agg-failover-gms.yaml') || d.name.startsWith('inline/')).flatMap((d) => d.cliques.filter((c) => c.name !== 'frontend'));
    const interPod = corpus.find((d) => d.name === 'interpod/vllm-gms-failover-shadows');
    expect(interPod?.cliques.map((c) => [c.name, ((c.podSpec['initContainers'] as Obj[] | undefined) ?? []).map((i) => i['name']), c.podSpec['restartPolicy']])).toEqual([
      ['vllmworker-gms-0', ['fix-gms-perms'], 'Always'],
      ['vllmworker', ['fix-gms-perms'], 'Never'],
    ]);
    const shape = (podSpec: Obj) => ({
      engines: ((podSpec['containers'] as Obj[]).map((c) => c['name']) as string[]).filter((n) => n.startsWith('engine-')),
      sidecars: ((podSpec['initContainers'] as Obj[] | undefined) ?? []).map((c) => c['name']).filter((n) => n === 'gms-server'),
      claims: ((podSpec['resourceClaims'] as Obj[] | undefined) ?? []).map((c) => c['name']),
    });
    expect(gmsPods.length).toBe(5);
    for (const clique of gmsPods) expect(shape(clique.podSpec)).toEqual({ engines: ['engine-0', 'engine-1'], sidecars: ['gms-server'], claims: ['intrapod-shared-gpu'] });
  });

  it('the check can fail: a mount without a volume and a probe without a handler are refused', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'broken' },
      spec: { containers: [{ name: 'main', image: 'x:1', volumeMounts: [{ name: 'nowhere', mountPath: '/data' }], livenessProbe: { periodSeconds: 5 } }] },
    };
    const answer = await api('POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All&fieldValidation=Strict`, pod);
    expect(answer.status).toBe(422);
    expect(String(answer.body['message'])).toContain('spec.containers[0].volumeMounts[0].name: Not found: "nowhere"');
  });
});

describe('strict input: render reports the unknown fields the API server reports', () => {
  const misspelled = {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'misspelled' },
    spec: {
      backendFramwork: 'vllm',
      components: [{ name: 'worker', type: 'worker', replcas: 2, podTemplate: { spec: { containers: [{ name: 'main', image: 'vllm-runtime:1.6.0', imagePullPolcy: 'Always' }] } } }],
    },
  };

  it('for DGD fields: "strict decoding error: unknown field ..." lists spec.backendFramwork and spec.components[0].replcas', async () => {
    const answer = await api('POST', `/apis/nvidia.com/v1beta1/namespaces/${namespace}/dynamographdeployments?dryRun=All&fieldValidation=Strict`, misspelled);
    const message = String(answer.body['message']);
    expect(answer.status).toBe(400);
    const reported = [...message.matchAll(/unknown field "([^"]+)"/g)].map((m) => m[1]).sort();
    // Our CRD keeps podTemplate open (x-kubernetes-preserve-unknown-fields), so the API server
    // reports only the DGD fields; the pod template field is checked by the Pod schema below.
    expect(reported).toEqual(unknownDgdFields(misspelled).filter((p) => !p.includes('.podTemplate.')).sort());
    expect(reported).toEqual(['spec.backendFramwork', 'spec.components[0].replcas']);
  });

  it('for pod template fields: the Pod schema reports the same field under spec.containers[0]', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'misspelled' }, spec: misspelled.spec.components[0]?.podTemplate.spec };
    const answer = await api('POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All&fieldValidation=Strict`, pod);
    expect(answer.status).toBe(400);
    expect(String(answer.body['message'])).toContain('unknown field "spec.containers[0].imagePullPolcy"');
    expect(unknownDgdFields(misspelled)).toContain('spec.components[0].podTemplate.spec.containers[0].imagePullPolcy');
  });
});
