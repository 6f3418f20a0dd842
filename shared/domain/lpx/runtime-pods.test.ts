import { describe, expect, it } from 'vitest';
import { nodeLocalV2ConnectedLpx, nodeLocalV2Hybrid, renderLpxPods as renderPods } from '../../../test/support/lpx-pod-fixtures.js';

const fieldRef = (fieldPath: string, apiVersion?: string) => ({ valueFrom: { fieldRef: { ...(apiVersion === undefined ? {} : { apiVersion }), fieldPath } } });
const byName = (list: unknown) => [...((list ?? []) as { name: string }[])].sort((a, b) => (a.name < b.name ? -1 : 1));
type Pod = { containers: Record<string, unknown>[]; volumes: unknown[] } & Record<string, unknown>;
const hybridBuilds = new Map([['lpu', nodeLocalV2ConnectedLpx]]);

describe('LPX pod runtime contract: upstream testdata/from_dgd_yaml/node-local-v2-hybrid.input.yaml -> node-local-v2-hybrid.yaml', () => {
  const pods = renderPods(nodeLocalV2Hybrid, hybridBuilds) as Record<string, Pod>;
  const agentPod = pods['agt'] as Pod;
  const cyborgPod = pods['cond'] as Pod;
  const agent = agentPod.containers[0] as Record<string, unknown>;
  const cyborg = cyborgPod.containers[0] as Record<string, unknown>;

  it('Agent container (fixture clique agt): renamed "agent"; env with LPX_MODEL_PATH first, POD_IP, the DYN_* and pod identity; resources lpu.nvidia.com/lpu 8, hugepages-2Mi 4Gi, cpu 62; privileged root; authored probes kept', () => {
    expect(agent['name']).toBe('agent');
    expect(agent['command']).toEqual(['/opt/dynamo-lpu']);
    expect(agent['args']).toEqual(['serve']);
    // The fixture's env, sorted by name, except: LPX_MODEL_PATH (the build's runtime path) is
    // published first so the authored GAS_DIR=$(LPX_MODEL_PATH) expands (upstream applyModelPaths);
    // the fixture's ETCD_ENDPOINTS/NATS_SERVER come from upstream's test operator config, its
    // GAS_DIR/TOPOLOGIES ConfigMap keys and literal LPU_MODEL_NAME from a ConfigMap layout our
    // runtime ConfigMaps do not carry, so the authored GAS_DIR and LPU_MODEL_NAME are kept.
    expect(agent['env']).toEqual([
      { name: 'LPX_MODEL_PATH', value: '/nfs/node-local-v2-connected-lpx' },
      { name: 'DYN_COMPONENT', value: 'lpx' },
      { name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' },
      { name: 'DYN_NAMESPACE', value: 'test-node-local-v2-hybrid' },
      { name: 'DYN_PARENT_DGD_K8S_NAME', value: 'node-local-v2-hybrid' },
      { name: 'DYN_PARENT_DGD_K8S_NAMESPACE', value: 'test' },
      { name: 'GAS_DIR', value: '$(LPX_MODEL_PATH)' },
      { name: 'GLUE_RDMA_PATH_MTU', value: '1024' },
      { name: 'LPU_MODEL_NAME', ...fieldRef("metadata.annotations['scheduling.lpu.nvidia.com/model']") },
      { name: 'NIC_NAME', value: 'mlx5_0' },
      { name: 'POD_IP', ...fieldRef('status.podIP', 'v1') },
      { name: 'POD_NAME', ...fieldRef('metadata.name') },
      { name: 'POD_NAMESPACE', ...fieldRef('metadata.namespace') },
      { name: 'POD_UID', ...fieldRef('metadata.uid') },
      { name: 'RDMA_PORT', value: '19877' },
      { name: 'READINESS_PORT', value: '19878' },
      { name: 'UCX_TLS', value: 'tcp' },
    ]);
    expect(agent['resources']).toEqual({ limits: { 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' } });
    expect(agent['securityContext']).toEqual({ privileged: true, runAsUser: 0 });
    const readyz = { failureThreshold: 60, httpGet: { path: '/readyz', port: 19878, scheme: 'HTTP' }, periodSeconds: 5, successThreshold: 1, timeoutSeconds: 1 };
    expect([agent['startupProbe'], agent['readinessProbe'], agent['livenessProbe']]).toEqual([readyz, { ...readyz, failureThreshold: 6 }, undefined]);
    expect(agent['volumeMounts']).toEqual([
      { mountPath: '/nfs', name: 'model-storage' },
      { mountPath: '/configs', name: 'config' },
      { mountPath: '/dev/hugepages', name: 'hugepages' },
      { mountPath: '/sys', name: 'host-sys' },
      { mountPath: '/dev', name: 'host-dev' },
      { mountPath: '/ssh-pk', name: 'ssh-secret', readOnly: true },
      { mountPath: '/dev/shm', name: 'shared-memory' },
    ]);
  });

  it('Agent pod: hostNetwork, hostIPC, dnsPolicy ClusterFirstWithHostNet; the three LPU node tolerations; root identity beside fsGroup 1000; grace 60 s; the config volume is the LPU ConfigMap, never a PVC', () => {
    expect([agentPod['hostNetwork'], agentPod['hostIPC'], agentPod['dnsPolicy'], agentPod['restartPolicy'], agentPod['schedulerName'], agentPod['terminationGracePeriodSeconds']]).toEqual([true, true, 'ClusterFirstWithHostNet', 'Always', 'lpx-scheduler', 60]);
    expect(agentPod['securityContext']).toEqual({ fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch', runAsGroup: 0, runAsNonRoot: false, runAsUser: 0 });
    expect(agentPod['tolerations']).toEqual([
      { key: 'lpu.nvidia.com/node', operator: 'Exists' },
      { key: 'lpu.nvidia.com/lpu', operator: 'Exists' },
      { key: 'lpu.nvidia.com/node-v2', operator: 'Exists' },
    ]);
    // Volumes are a list map keyed by name: compared by name (the fixture lists them in another order).
    expect(byName(agentPod.volumes)).toEqual(byName([
      { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
      { name: 'hugepages', emptyDir: { medium: 'HugePages' } },
      { name: 'host-sys', hostPath: { path: '/sys', type: 'Directory' } },
      { name: 'host-dev', hostPath: { path: '/dev', type: 'Directory' } },
      { name: 'ssh-secret', secret: { defaultMode: 420, secretName: 'ssh-secret' } },
      { name: 'shared-memory', emptyDir: { medium: 'Memory', sizeLimit: '8Gi' } },
      { name: 'config', configMap: { name: 'node-local-v2-hybrid-9d06-lpu-355e8ac6768c54e3' } },
    ]));
  });

  it('Cyborg main (fixture clique cond): the decode-worker env (DYN_COMPONENT decode, DYN_SYSTEM_*, NIXL telemetry, DYN_FORWARDPASS_METRIC_PORT), the CYBORG_* env, GBUILD_MANIFEST_PATH, TOTAL_REPLICAS; ports system 9090 and nixl 19090; probes /live, /health, /live', () => {
    expect(cyborg['name']).toBe('main');
    // The fixture's env, except TOKENIZER_DIR (a ConfigMap key our runtime ConfigMaps do not
    // carry) and ETCD_ENDPOINTS/NATS_SERVER (upstream's test operator config).
    expect(cyborg['env']).toEqual([
      { name: 'CYBORG_BATCH_SIZE', value: '1' },
      { name: 'CYBORG_FPGA_GPI_IO_FPGA_COUNT', value: '1' },
      { name: 'CYBORG_FPGA_GPI_REPLICA_INDEX', ...fieldRef("metadata.labels['grove.io/podclique-pod-index']") },
      { name: 'CYBORG_SWA_CACHE_IDS', ...fieldRef("metadata.labels['grove.io/podclique-pod-index']") },
      { name: 'DYN_COMPONENT', value: 'decode' },
      { name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' },
      { name: 'DYN_FORWARDPASS_METRIC_PORT', value: '20380' },
      { name: 'DYN_HEALTH_CHECK_ENABLED', value: 'false' },
      { name: 'DYN_NAMESPACE', value: 'test-node-local-v2-hybrid' },
      { name: 'DYN_PARENT_DGD_K8S_NAME', value: 'node-local-v2-hybrid' },
      { name: 'DYN_PARENT_DGD_K8S_NAMESPACE', value: 'test' },
      { name: 'DYN_SYSTEM_ENABLED', value: 'true' },
      { name: 'DYN_SYSTEM_PORT', value: '9090' },
      { name: 'DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS', value: '["generate"]' },
      { name: 'GBUILD_MANIFEST_PATH', value: '/nfs/node-local-v2-connected-lpx/manifest.v2.capnp.bin' },
      { name: 'NIXL_TELEMETRY_ENABLE', value: 'n' },
      { name: 'NIXL_TELEMETRY_EXPORTER', value: 'prometheus' },
      { name: 'NIXL_TELEMETRY_PROMETHEUS_PORT', value: '19090' },
      { name: 'POD_NAME', ...fieldRef('metadata.name') },
      { name: 'POD_NAMESPACE', ...fieldRef('metadata.namespace') },
      { name: 'POD_UID', ...fieldRef('metadata.uid') },
      { name: 'RDMA_PORT', value: '19877' },
      { name: 'SERVER_HOSTS_FILE', value: '/tmp/lpu_servers' },
      { name: 'TOTAL_REPLICAS', value: '1' },
    ]);
    expect(cyborg['ports']).toEqual([{ containerPort: 9090, name: 'system', protocol: 'TCP' }, { containerPort: 19090, name: 'nixl', protocol: 'TCP' }]);
    expect([cyborg['livenessProbe'], cyborg['readinessProbe'], cyborg['startupProbe']]).toEqual([
      { failureThreshold: 1, httpGet: { path: '/live', port: 'system' }, periodSeconds: 5, timeoutSeconds: 4 },
      { failureThreshold: 3, httpGet: { path: '/health', port: 'system' }, periodSeconds: 10, timeoutSeconds: 4 },
      { failureThreshold: 720, httpGet: { path: '/live', port: 'system' }, periodSeconds: 10, timeoutSeconds: 5 },
    ]);
    expect(cyborg['resources']).toEqual({ claims: [{ name: 'gpu' }] });
    expect(cyborg['volumeMounts']).toEqual([
      { mountPath: '/configs', name: 'config' },
      { mountPath: '/dev/infiniband', name: 'infiniband' },
      { mountPath: '/nfs', name: 'model-storage' },
      { mountPath: '/dev/shm', name: 'shared-memory' },
    ]);
  });

  it('Cyborg pod: the default-scheduler, the authored resourceClaims, fsGroup 1000, grace 60 s, the decode ConfigMap as volume config', () => {
    expect([cyborgPod['schedulerName'], cyborgPod['restartPolicy'], cyborgPod['terminationGracePeriodSeconds'], cyborgPod['hostNetwork']]).toEqual(['default-scheduler', 'Always', 60, undefined]);
    expect(cyborgPod['resourceClaims']).toEqual([{ name: 'gpu', resourceClaimTemplateName: 'decode-gpu' }]);
    expect(cyborgPod['securityContext']).toEqual({ fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' });
    expect(byName(cyborgPod.volumes)).toEqual(byName([
      { name: 'infiniband', hostPath: { path: '/dev/infiniband', type: 'Directory' } },
      { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
      { name: 'shared-memory', emptyDir: { medium: 'Memory', sizeLimit: '8Gi' } },
      { name: 'config', configMap: { name: 'node-local-v2-hybrid-9d06-decode-734ce683f6b7ea5f' } },
    ]));
  });
});

describe('LPX pod runtime contract without a decoded build (issue 11: build-dependent parts need the snapshot\'s decoded build)', () => {
  const pods = renderPods(nodeLocalV2Hybrid, new Map()) as Record<string, Pod>;
  const agent = (pods['agt'] as Pod).containers[0] as Record<string, unknown>;

  it('the Agent keeps its authored devices and gets no LPX_MODEL_PATH, but still the name, POD_IP, cpu/hugepages, privileged root, host namespaces and tolerations', () => {
    expect(agent['name']).toBe('agent');
    const env = (agent['env'] as { name: string }[]).map((e) => e.name);
    expect([env.includes('LPX_MODEL_PATH'), env.includes('POD_IP')]).toEqual([false, true]);
    expect(agent['resources']).toEqual({ limits: { 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/devices': '1' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi' } });
    expect(agent['securityContext']).toEqual({ privileged: true, runAsUser: 0 });
    expect(((pods['agt'] as Pod)['tolerations'] as unknown[]).length).toBe(3);
  });

  it('with no build the pipeline is unknown, so the conductor is not rendered as a Cyborg and keeps the lpx-scheduler', () => {
    expect((pods['cond'] as Pod)['schedulerName']).toBe('lpx-scheduler');
  });

  it('is deterministic and leaves the DGD unchanged (a frozen input does not throw)', () => {
    const frozen = structuredClone(nodeLocalV2Hybrid);
    deepFreeze(frozen);
    expect(renderPods(frozen, hybridBuilds)).toEqual(renderPods(nodeLocalV2Hybrid, hybridBuilds));
  });
});

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
