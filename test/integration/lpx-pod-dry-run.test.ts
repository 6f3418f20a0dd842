/**
 * The LPX pod runtime contract yields valid Pods: the Agent and Cyborg pod specs of upstream's
 * fixture node-local-v2-hybrid (rendered with its decoded build, so every build-dependent part
 * is present: LPU chips, LPX_MODEL_PATH, GBUILD_MANIFEST_PATH) are created as Pods on the real
 * API server with `dryRun=All` and `fieldValidation=Strict`, as test/integration/pod-dry-run.test.ts
 * does for ordinary DGD cliques: Pod validation (huge pages, extended resources, host
 * namespaces, resource claims, env references, volumes) and admission run, nothing is stored.
 * The same for node-local-v2-lpu-only, node-local-v2-specdecode and node-local-v3-hx-lpu-only (LPU-only
 * Agents and Nova conductors; the HX Agent with its prepare-lp30 init container, host device
 * volumes and `nvidia.com/lpu: 16`), and an HX build in node-local-v2-hybrid's templates (the HX
 * hybrid Agent of upstream's node-local-v3-hx-hybrid.yaml).
 * The ServiceAccount the rendered pods name is created first, as the installation would.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { apiClient } from '../support/api.js';
import { nodeLocalV2Connected, nodeLocalV2ConnectedLpx, nodeLocalV2Hybrid, nodeLocalV2LpuOnly, nodeLocalV2Specdecode, nodeLocalV3HxConnected, nodeLocalV3HxConnectedLpx, nodeLocalV3HxLpuOnly, renderLpxPods } from '../support/lpx-pod-fixtures.js';

const api = apiClient();
let namespace: string;
const pods = renderLpxPods(nodeLocalV2Hybrid, new Map([['lpu', nodeLocalV2ConnectedLpx]]));
const lpuOnlyPods = renderLpxPods(nodeLocalV2LpuOnly, new Map([['lpu', nodeLocalV2Connected]]));
const specdecodePods = renderLpxPods(nodeLocalV2Specdecode, new Map([['draft', nodeLocalV2Connected], ['lpu', nodeLocalV2Connected]]));
const hxPods = renderLpxPods(nodeLocalV3HxLpuOnly, new Map([['lpu', nodeLocalV3HxConnected]]));
const hxHybridPods = renderLpxPods(nodeLocalV2Hybrid, new Map([['lpu', nodeLocalV3HxConnectedLpx]]));

beforeAll(async () => {
  namespace = await createTestNamespace(testKubeConfig(), 'lpx-pod-dry-run');
  const accounts = new Set([...Object.values(pods), ...Object.values(lpuOnlyPods), ...Object.values(hxPods), ...Object.values(hxHybridPods), ...Object.values(specdecodePods)].flatMap((p) => (typeof p['serviceAccountName'] === 'string' ? [p['serviceAccountName']] : [])));
  for (const name of accounts) {
    const created = await api('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
});

describe('LPX Agent and Cyborg pod specs pass the API server\'s Pod validation (dry-run create, strict fields; upstream fixture node-local-v2-hybrid)', () => {
  it('renders both cliques with the build-dependent contract', () => {
    expect(Object.keys(pods)).toEqual(['agt', 'cond']);
    const agent = (pods['agt']?.['containers'] as { name: string; resources: unknown }[])[0];
    expect([agent?.name, agent?.resources]).toEqual(['agent', { limits: { 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' } }]);
  });

  it('renders the HX Agents with their LP30 contract (upstream fixtures node-local-v3-hx-lpu-only.yaml, node-local-v3-hx-hybrid.yaml: nvidia.com/lpu 16; LPU only: the prepare-lp30 init container)', () => {
    const hx = hxPods['agt'] as { containers: { resources: unknown }[]; initContainers: { name: string }[] };
    expect([hx.containers[0]?.resources, hx.initContainers.map((c) => c.name)]).toEqual([{ limits: { 'nvidia.com/lpu': '16' }, requests: { 'nvidia.com/lpu': '16' } }, ['prepare-lp30']]);
    const hybrid = hxHybridPods['agt'] as { containers: { resources: unknown }[] };
    expect(hybrid.containers[0]?.resources).toEqual({ limits: { 'hugepages-2Mi': '4Gi', 'nvidia.com/lpu': '16' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi', 'nvidia.com/lpu': '16' } });
  });

  it.each([
    { fixture: 'node-local-v2-hybrid', clique: 'agt', spec: pods['agt'] },
    { fixture: 'node-local-v2-hybrid', clique: 'cond', spec: pods['cond'] },
    { fixture: 'node-local-v2-lpu-only', clique: 'agt', spec: lpuOnlyPods['agt'] },
    { fixture: 'node-local-v2-lpu-only', clique: 'cond', spec: lpuOnlyPods['cond'] },
    { fixture: 'node-local-v2-specdecode', clique: 'agt0', spec: specdecodePods['agt0'] },
    { fixture: 'node-local-v2-specdecode', clique: 'cond', spec: specdecodePods['cond'] },
    { fixture: 'node-local-v3-hx-lpu-only', clique: 'agt', spec: hxPods['agt'] },
    { fixture: 'node-local-v3-hx-lpu-only', clique: 'cond', spec: hxPods['cond'] },
    { fixture: 'node-local-v3-hx-hybrid', clique: 'agt', spec: hxHybridPods['agt'] },
  ])('$fixture clique $clique is a valid Pod', async ({ fixture, clique, spec }) => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${fixture}-${clique}-0` }, spec };
    const answer = await api('POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All&fieldValidation=Strict`, pod);
    expect(answer.status, JSON.stringify(answer.body['message'])).toBe(201);
  });

  it('the check can fail: the Agent with huge pages requested but not limited is refused', async () => {
    const agentSpec = structuredClone(pods['agt'] ?? {});
    const agent = (agentSpec['containers'] as { resources: { limits: Record<string, string> } }[])[0];
    if (agent !== undefined) delete agent.resources.limits['hugepages-2Mi'];
    const answer = await api('POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All&fieldValidation=Strict`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lpx-broken' }, spec: agentSpec });
    expect(answer.status).toBe(422);
    expect(String(answer.body['message'])).toContain('spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources');
  });
});
