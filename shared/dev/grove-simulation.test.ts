import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../kube/index.js';
import { groveChildren, readyChildStatus, readyPodCliqueSetStatus, statusHolds } from './grove-simulation.js';
import { selectSimulations } from '../cli/dev.js';
import { isHeld, simulatedReceipt } from './lpx-scheduler-simulation.js';

const pcs: KubeObject = {
  apiVersion: 'grove.io/v1alpha1',
  kind: 'PodCliqueSet',
  metadata: { name: 'llm', namespace: 'inference', uid: 'pcs-uid', generation: 3 },
  spec: {
    replicas: 1,
    template: {
      cliques: [
        { name: 'frontend', spec: { roleName: 'frontend', replicas: 2, podSpec: { containers: [{ name: 'main', image: 'f' }] } } },
        { name: 'ldr', spec: { roleName: 'ldr', replicas: 1, podSpec: { containers: [{ name: 'main', image: 'w' }] } } },
        { name: 'wkr', spec: { roleName: 'wkr', replicas: 3, podSpec: { containers: [{ name: 'main', image: 'w' }] } } },
      ],
      podCliqueScalingGroups: [{ name: 'decode', cliqueNames: ['ldr', 'wkr'], replicas: 2, minAvailable: 1 }],
    },
  },
};

describe('the Grove simulation (upstream-notes/grove.md)', () => {
  it('names children as §A.8 says: "Standalone PCLQ <pcs>-<pcsReplica>-<clique>", "PCSG <pcs>-<pcsReplica>-<pcsgName>", "PCLQ inside a PCSG <pcs>-<pcsReplica>-<pcsgName>-<pcsgReplica>-<clique>"', () => {
    expect(groveChildren(pcs).map((c) => `${c.kind}/${c.name}`)).toEqual([
      'PodClique/llm-0-frontend',
      'PodCliqueScalingGroup/llm-0-decode',
      'PodClique/llm-0-decode-0-ldr',
      'PodClique/llm-0-decode-0-wkr',
      'PodClique/llm-0-decode-1-ldr',
      'PodClique/llm-0-decode-1-wkr',
    ]);
  });

  it('one set of children per PodCliqueSet replica ("grove.io/podcliqueset-replica-index"), none at replicas 0', () => {
    const two = { ...pcs, spec: { ...(pcs['spec'] as object), replicas: 2 } };
    expect(groveChildren(two).filter((c) => c.kind === 'PodClique' && c.name.endsWith('frontend')).map((c) => [c.name, (c.object.metadata.labels as Record<string, string> | undefined)?.['grove.io/podcliqueset-replica-index']])).toEqual([
      ['llm-0-frontend', '0'],
      ['llm-1-frontend', '1'],
    ]);
    expect(groveChildren({ ...pcs, spec: { ...(pcs['spec'] as object), replicas: 0 } })).toEqual([]);
  });

  it("a group's member cliques follow the stored group's spec.replicas (template replicas only seed creation, §A.6 \"Replica propagation\")", () => {
    const names = groveChildren(pcs, (name) => (name === 'llm-0-decode' ? 3 : undefined)).map((c) => c.name);
    expect(names).toContain('llm-0-decode-2-wkr');
    expect(names.filter((n) => n.startsWith('llm-0-decode-'))).toHaveLength(6);
    const group = groveChildren(pcs).find((c) => c.kind === 'PodCliqueScalingGroup');
    expect(group?.object['spec']).toEqual({ replicas: 2, minAvailable: 1, cliqueNames: ['ldr', 'wkr'] });
  });

  it('carries Grove\'s labels (§A.8 "app.kubernetes.io/{managed-by=grove-operator, part-of=<pcs>}", grove.io/podcliquescalinggroup[-replica-index]) and a controller reference', () => {
    const member = groveChildren(pcs).find((c) => c.name === 'llm-0-decode-1-wkr');
    expect(member?.object.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'grove-operator',
      'app.kubernetes.io/part-of': 'llm',
      'grove.io/podcliquescalinggroup': 'llm-0-decode',
      'grove.io/podcliquescalinggroup-replica-index': '1',
    });
    expect(member?.object['spec']).toMatchObject({ roleName: 'wkr', replicas: 3, minAvailable: 3 });
    const standalone = groveChildren(pcs).find((c) => c.name === 'llm-0-frontend');
    expect(standalone?.object.metadata.ownerReferences).toEqual([{ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', name: 'llm', uid: 'pcs-uid', controller: true, blockOwnerDeletion: true }]);
  });

  it('defaults a clique as Grove\'s webhook does (§A.5): "spec.replicas defaults from 0 to 1", "spec.minAvailable is set from spec.replicas when nil"', () => {
    const bare = { ...pcs, spec: { replicas: 1, template: { cliques: [{ name: 'x', spec: { podSpec: {} } }] } } };
    expect(groveChildren(bare)[0]?.object['spec']).toMatchObject({ roleName: 'x', replicas: 1, minAvailable: 1 });
  });

  it('reports a child ready at its generation: PodClique readyReplicas (§A.3), scaling group availableReplicas (§A.4), MinAvailableBreached=False', () => {
    const clique = { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', metadata: { name: 'c', generation: 2 }, spec: { replicas: 4 } };
    expect(readyChildStatus(clique, 't')).toMatchObject({ observedGeneration: 2, replicas: 4, readyReplicas: 4, updatedReplicas: 4, scheduledReplicas: 4, scheduleGatedReplicas: 0 });
    const group = { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', metadata: { name: 'g', generation: 5 }, spec: { replicas: 2 } };
    const status = readyChildStatus(group, 't');
    expect(status).toMatchObject({ observedGeneration: 5, replicas: 2, availableReplicas: 2, updatedReplicas: 2 });
    expect(status['conditions']).toEqual([expect.objectContaining({ type: 'MinAvailableBreached', status: 'False', reason: 'SufficientReadyPods' })]);
    expect(readyPodCliqueSetStatus(pcs)).toEqual({ observedGeneration: 3, replicas: 1, updatedReplicas: 1, availableReplicas: 1 });
  });

  it('writes a status only when it differs (condition times aside), so a pass over a settled world writes nothing', () => {
    const clique = { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', metadata: { name: 'c', generation: 2 }, spec: { replicas: 4 } };
    expect(statusHolds(readyChildStatus(clique, 'earlier'), readyChildStatus(clique, 'later'))).toBe(true);
    expect(statusHolds({ ...readyChildStatus(clique, 't'), observedGeneration: 1 }, readyChildStatus(clique, 't'))).toBe(false);
    expect(statusHolds(undefined, readyPodCliqueSetStatus(pcs))).toBe(false);
  });

  it('holds for a status as the API server returns it (a custom resource\'s keys sorted by name), so a settled PodClique is not rewritten every pass', () => {
    const clique = { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', metadata: { name: 'c', generation: 1 }, spec: { replicas: 8 } };
    // Read back from kube-apiserver 1.35 after the simulation's own status apply (dynamo-fn dev, 2026-12-02).
    const stored = {
      conditions: [{ lastTransitionTime: '2026-12-02T08:08:11.378Z', message: 'Simulated by dynamo-fn dev (not the real Grove controller)', reason: 'SufficientReadyPods', status: 'False', type: 'MinAvailableBreached' }],
      observedGeneration: 1,
      readyReplicas: 8,
      replicas: 8,
      scheduleGatedReplicas: 0,
      scheduledReplicas: 8,
      updatedReplicas: 8,
    };
    expect(statusHolds(stored, readyChildStatus(clique, '2026-12-02T08:08:12.483Z'))).toBe(true);
    expect(statusHolds({ ...stored, conditions: [{ ...stored.conditions[0], status: 'True' }] }, readyChildStatus(clique, 't'))).toBe(false);
  });
});

describe('dev --simulate', () => {
  it('runs every simulation by default; none with "none"; --no-simulate-<name> removes one; an unknown name is refused', () => {
    expect(selectSimulations(undefined, [])).toEqual({ ok: true, flags: ['grove', 'lpx-scheduler'] });
    expect(selectSimulations('none', [])).toEqual({ ok: true, flags: [] });
    expect(selectSimulations('grove', [])).toEqual({ ok: true, flags: ['grove'] });
    expect(selectSimulations(undefined, ['grove'])).toEqual({ ok: true, flags: ['lpx-scheduler'] });
    expect(selectSimulations(undefined, ['lpx-scheduler'])).toEqual({ ok: true, flags: ['grove'] });
    expect(selectSimulations('grove,kubelet', [])).toEqual({ ok: false, error: '--simulate: unsupported value "kubelet": supported values: none, or a comma-separated list of "grove", "lpx-scheduler"' });
  });
});

describe('the LPX scheduler simulation', () => {
  const request = (generation: number, status?: Record<string, unknown>): KubeObject => ({ apiVersion: 'scheduling.lpu.nvidia.com/v1alpha1', kind: 'LpuPipelineRequest', metadata: { name: 'r', generation }, ...(status === undefined ? {} : { status }) });

  it('answers each request with a "bound" receipt at its current generation (only a receipt with status.observedGeneration == metadata.generation counts), once', () => {
    expect(simulatedReceipt(request(2), false)).toEqual({ phase: 'bound', observedGeneration: 2 });
    expect(simulatedReceipt(request(3, { phase: 'bound', observedGeneration: 2 }), false)).toEqual({ phase: 'bound', observedGeneration: 3 });
    expect(simulatedReceipt(request(3, { phase: 'bound', observedGeneration: 3 }), false)).toBeUndefined();
  });

  it('never answers a held DGD\'s requests (so their scheduling deadline passes) nor a request being deleted', () => {
    expect(simulatedReceipt(request(1), true)).toBeUndefined();
    expect(simulatedReceipt({ ...request(1), metadata: { name: 'r', generation: 1, deletionTimestamp: '2026-12-02T00:00:00Z' } }, false)).toBeUndefined();
    expect(isHeld({ apiVersion: 'v', kind: 'k', metadata: { name: 'd', annotations: { 'dynamo-fn.dev/simulated-lpx-scheduler': 'hold' } } })).toBe(true);
    expect(isHeld({ apiVersion: 'v', kind: 'k', metadata: { name: 'd' } })).toBe(false);
    expect(isHeld(undefined)).toBe(false);
  });
});
