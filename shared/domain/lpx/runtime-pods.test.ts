import { describe, expect, it } from 'vitest';
import { lpxBuildRuntimePath, withAgentResources, withDirectHybridAgentEnv, withHxAgentDevices, withLeadingEnv, withLp30InitContainer, withLp30Probes, withLp30WorkerContainer, withPodIpEnv } from './runtime-pods.js';
import { nodeLocalV2Connected, nodeLocalV2ConnectedLpx, nodeLocalV2Hybrid, nodeLocalV2LpuOnly, nodeLocalV2Specdecode, nodeLocalV3HxConnected, nodeLocalV3HxConnectedLpx, nodeLocalV3HxLpuOnly, renderLpxPods as renderPods } from '../../../test/support/lpx-pod-fixtures.js';

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

describe('LPX pod runtime contract: upstream testdata/from_dgd_yaml/node-local-v2-lpu-only.input.yaml -> node-local-v2-lpu-only.yaml', () => {
  const pods = renderPods(nodeLocalV2LpuOnly, new Map([['lpu', nodeLocalV2Connected]])) as Record<string, Pod>;
  const agentPod = pods['agt'] as Pod;
  const novaPod = pods['cond'] as Pod;
  const agent = agentPod.containers[0] as Record<string, unknown>;
  const nova = novaPod.containers[0] as Record<string, unknown>;
  const byMountPath = (list: unknown) => [...((list ?? []) as { mountPath: string }[])].sort((a, b) => (a.mountPath < b.mountPath ? -1 : 1));

  it('Agent (fixture clique agt): renamed "agent", LPU_RUN_SYSTEM_INIT, POD_IP, no model path (the Nova conductor gets it), lpu.nvidia.com/lpu 8 per pod, host namespaces', () => {
    // Newer than the stored fixture, upstream's setNodeLocalPodIPEnv sets apiVersion v1,
    // applyLPUWorkerContainerBase runAsUser 0 and ensureLPUNodeTolerations all three taints.
    expect(agent['name']).toBe('agent');
    expect(agent['env']).toEqual([
      { name: 'DYN_COMPONENT', value: 'lpx' },
      { name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' },
      { name: 'DYN_NAMESPACE', value: 'test-node-local-v2-lpu-only' },
      { name: 'DYN_PARENT_DGD_K8S_NAME', value: 'node-local-v2-lpu-only' },
      { name: 'DYN_PARENT_DGD_K8S_NAMESPACE', value: 'test' },
      { name: 'LPU_RUN_SYSTEM_INIT', value: 'true' },
      { name: 'POD_IP', ...fieldRef('status.podIP', 'v1') },
      { name: 'POD_NAME', ...fieldRef('metadata.name') },
      { name: 'POD_NAMESPACE', ...fieldRef('metadata.namespace') },
      { name: 'POD_UID', ...fieldRef('metadata.uid') },
    ]);
    expect(agent['resources']).toEqual({ limits: { 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' } });
    expect(agent['securityContext']).toEqual({ privileged: true, runAsUser: 0 });
    expect(agent['readinessProbe']).toEqual({ failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, tcpSocket: { port: 2222 }, timeoutSeconds: 1 });
    // Mounts are keyed by path: compared by path (the fixture binds config second).
    expect(byMountPath(agent['volumeMounts'])).toEqual(byMountPath([
      { mountPath: '/nfs', name: 'model-storage' },
      { mountPath: '/configs', name: 'config' },
      { mountPath: '/dev', name: 'host-dev' },
      { mountPath: '/sys', name: 'host-sys' },
      { mountPath: '/ssh-pk', name: 'ssh-secret', readOnly: true },
      { mountPath: '/dev/hugepages', name: 'hugepages' },
      { mountPath: '/dev/shm', name: 'shared-memory' },
    ]));
    expect([agentPod['hostNetwork'], agentPod['hostIPC'], agentPod['dnsPolicy'], agentPod['schedulerName'], agentPod['terminationGracePeriodSeconds']]).toEqual([true, true, 'ClusterFirstWithHostNet', 'lpx-scheduler', 60]);
    expect(agentPod['securityContext']).toEqual({ fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' });
    expect(byName(agentPod.volumes).map((v) => v.name)).toEqual(['config', 'host-dev', 'host-sys', 'hugepages', 'model-storage', 'shared-memory', 'ssh-secret']);
  });

  it('Nova conductor (fixture clique cond): renamed "conductor"; LPX_MODEL_PATH and LPX_ALLOCATION published ahead of the authored $(LPX_MODEL_PATH)/$(LPX_ALLOCATION) references; NOVA_NODE_NAME_TEMPLATE, NOVA_RESOLVED_PARTITIONS_DIR, POD_IP; authored command, args, probe and init container kept', () => {
    expect(nova['name']).toBe('conductor');
    const env = nova['env'] as { name: string }[];
    expect(env.slice(0, 2)).toEqual([{ name: 'LPX_MODEL_PATH', value: '/nfs/node-local-v2-connected' }, { name: 'LPX_ALLOCATION', value: 'agt' }]);
    // The fixture's env (sorted by name there) apart from the order above and its test config's ETCD_ENDPOINTS/NATS_SERVER.
    expect(byName(env)).toEqual(byName([
      { name: 'DYN_COMPONENT', value: 'lpx' },
      { name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' },
      { name: 'DYN_NAMESPACE', value: 'test-node-local-v2-lpu-only' },
      { name: 'DYN_PARENT_DGD_K8S_NAME', value: 'node-local-v2-lpu-only' },
      { name: 'DYN_PARENT_DGD_K8S_NAMESPACE', value: 'test' },
      { name: 'LPX_ALLOCATION', value: 'agt' },
      { name: 'LPX_MODEL_PATH', value: '/nfs/node-local-v2-connected' },
      { name: 'NOVA_MODEL_BASE_PATHS', value: '/nfs' },
      { name: 'NOVA_MODEL_PATH', value: '$(LPX_MODEL_PATH)' },
      { name: 'NOVA_NODE_NAME_TEMPLATE', value: '${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-{rack}-{node}.${GROVE_HEADLESS_SERVICE}' },
      { name: 'NOVA_RESOLVED_PARTITIONS_DIR', value: '/configs' },
      { name: 'OMPI_ALLOW_RUN_AS_ROOT', value: '1' },
      { name: 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', value: '1' },
      { name: 'OMPI_MCA_plm_rsh_args', value: '-p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentityFile=/tmp/dynamo-lpu-ssh/private.key' },
      { name: 'POD_IP', ...fieldRef('status.podIP', 'v1') },
      { name: 'POD_NAME', ...fieldRef('metadata.name') },
      { name: 'POD_NAMESPACE', ...fieldRef('metadata.namespace') },
      { name: 'POD_UID', ...fieldRef('metadata.uid') },
    ]));
    expect([nova['command'], (nova['args'] as string[]).at(-1), nova['resources']]).toEqual([['/opt/dynamo-lpu'], '$(LPX_ALLOCATION)', undefined]);
    expect(nova['readinessProbe']).toEqual({ failureThreshold: 3, httpGet: { path: '/readyz', port: 51045, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, timeoutSeconds: 1 });
    expect(byMountPath(nova['volumeMounts'])).toEqual(byMountPath([
      { mountPath: '/nfs', name: 'model-storage' },
      { mountPath: '/configs', name: 'config' },
      { mountPath: '/tmp/dynamo-lpu-ssh', name: 'single-v2-ssh-key' },
      { mountPath: '/dev/shm', name: 'shared-memory' },
    ]));
    expect([novaPod['schedulerName'], novaPod['hostNetwork'], novaPod['terminationGracePeriodSeconds'], (novaPod['initContainers'] as { name: string }[]).map((c) => c.name)]).toEqual(['lpx-scheduler', undefined, 60, ['prepare-ssh-key']]);
    expect(byName(novaPod.volumes)).toEqual(byName([
      { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
      { name: 'single-v2-ssh-key', emptyDir: {} },
      { name: 'shared-memory', emptyDir: { medium: 'Memory', sizeLimit: '8Gi' } },
      { name: 'ssh-secret', secret: { defaultMode: 384, secretName: 'ssh-secret' } },
      { name: 'config', configMap: { name: 'node-local-v2-lpu-only-33b1-lpu-6bcf1f4cf22aaf55' } },
    ]));
  });
});

describe('LPX pod runtime contract: upstream testdata/from_dgd_yaml/node-local-v3-hx-lpu-only.input.yaml -> node-local-v3-hx-lpu-only.yaml', () => {
  const pods = renderPods(nodeLocalV3HxLpuOnly, new Map([['lpu', nodeLocalV3HxConnected]])) as Record<string, Pod>;
  const agentPod = pods['agt'] as Pod;
  const agent = agentPod.containers[0] as Record<string, unknown>;
  const nova = (pods['cond'] as Pod).containers[0] as Record<string, unknown>;

  it('HX Agent (fixture clique agt): renamed "agent", POD_IP, host namespaces; the LP30 worker env (runtime_agent.go lp30WorkerEnvironment), nvidia.com/lpu 16 for the authored lpu.nvidia.com/devices; none of the XT worker base (no cpu, huge pages, LPU_RUN_SYSTEM_INIT or added tolerations); the authored startup kept; the SSH readiness probe (lpu_commands.go lpuSSHProbe)', () => {
    expect(agent['name']).toBe('agent');
    expect(agent['command']).toEqual(['/bin/quasar-entrypoint']);
    expect(agent['readinessProbe']).toEqual({ failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, tcpSocket: { port: 2222 }, timeoutSeconds: 1 });
    // The fixture lists only the four LP30 entries its input authors; upstream's newest
    // configureNodeLocalAgentWorkerContainer sets all of lp30WorkerEnvironment (the GROQ_* too).
    expect(agent['env']).toEqual([
      { name: 'BMC_SSH_ENABLED', value: 'false' },
      { name: 'DYN_COMPONENT', value: 'lpx' },
      { name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' },
      { name: 'DYN_NAMESPACE', value: 'test-node-local-v3-hx-lpu-only' },
      { name: 'DYN_PARENT_DGD_K8S_NAME', value: 'node-local-v3-hx-lpu-only' },
      { name: 'DYN_PARENT_DGD_K8S_NAMESPACE', value: 'test' },
      { name: 'GROQ_HAL_V2_BACKGROUND_METRICS', value: 'false' },
      { name: 'GROQ_PG613_PORT_CONFIG', value: 'EB3' },
      { name: 'GROQ_PG613_REQUIRE_ALTAIR_PCIE_GEN2', value: 'false' },
      { name: 'GROQ_PG613_SKIP_HOST_LINK_PROFILE', value: '0' },
      { name: 'GROQ_V2_FPGA_BUS_ADDRESS_ID_0', value: '0000:9a:00.0' },
      { name: 'GROQ_V2_FPGA_BUS_ADDRESS_ID_1', value: '0000:7e:00.0' },
      { name: 'GROQ_V2_HEALTH_CHECK_ON_OPEN', value: '0' },
      { name: 'GROQ_V2_RESET_ON_OPEN', value: '0' },
      { name: 'LPU_FPGA_AUTOMATIC_JTAG_RECOVERY', value: 'false' },
      { name: 'LPU_FPGA_RECONFIGURE_METHOD', value: 'cvp' },
      { name: 'POD_IP', ...fieldRef('status.podIP', 'v1') },
      { name: 'POD_NAME', ...fieldRef('metadata.name') },
      { name: 'POD_NAMESPACE', ...fieldRef('metadata.namespace') },
      { name: 'POD_UID', ...fieldRef('metadata.uid') },
      { name: 'REDFISH_BMC_ENABLED', value: 'false' },
    ]);
    expect(agent['resources']).toEqual({ limits: { 'nvidia.com/lpu': '16' }, requests: { 'nvidia.com/lpu': '16' } });
    // The fixture shows the authored `privileged: true`; the newest code sets the whole root identity.
    expect(agent['securityContext']).toEqual({ privileged: true, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false });
    // The same mounts as the fixture (the ConfigMap binding appends `config` where the fixture lists it second).
    expect(byName(agent['volumeMounts'])).toEqual([
      { mountPath: '/configs', name: 'config' },
      { mountPath: '/dev', name: 'host-dev' },
      { mountPath: '/sys', name: 'host-sys' },
      { mountPath: '/nfs', name: 'model-storage' },
      { mountPath: '/dev/shm', name: 'shared-memory' },
      { mountPath: '/ssh-pk', name: 'ssh-secret', readOnly: true },
    ]);
    expect([agentPod['hostNetwork'], agentPod['hostIPC'], agentPod['dnsPolicy'], agentPod['tolerations']]).toEqual([true, true, 'ClusterFirstWithHostNet', [{ key: 'lpu.nvidia.com/node', operator: 'Exists' }]]);
    expect(byName(agentPod.volumes).map((v) => v.name)).toEqual(['config', 'host-dev', 'host-sys', 'model-storage', 'shared-memory', 'ssh-secret']);
    expect(agentPod.volumes.filter((v) => String((v as { name: string }).name).startsWith('host-'))).toEqual([
      { name: 'host-dev', hostPath: { path: '/dev', type: 'Directory' } },
      { name: 'host-sys', hostPath: { path: '/sys', type: 'Directory' } },
    ]);
  });

  it('HX Agent init container prepare-lp30 (runtime_agent.go addLP30InitContainer): /bin/lp30-agent-v2-init from the Agent image, NODE_NAME from spec.nodeName, privileged root, host-sys at /sys then host-dev at /dev', () => {
    expect(agentPod['initContainers']).toEqual([{
      name: 'prepare-lp30',
      image: 'example.invalid/lpu-runtime:test',
      command: ['/bin/lp30-agent-v2-init'],
      env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
      // The fixture shows the authored `privileged: true`; the newest addLP30InitContainer sets the root identity.
      securityContext: { privileged: true, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false },
      volumeMounts: [{ mountPath: '/sys', name: 'host-sys' }, { mountPath: '/dev', name: 'host-dev' }],
    }]);
  });

  it('HX Agent without authored LP30 setup (an image-only template, as upstream\'s newest code expects): the same prepare-lp30, host devices and nvidia.com/lpu 16 are injected', () => {
    const bare = structuredClone(nodeLocalV3HxLpuOnly) as unknown as { spec: { components: { roles: { name: string; podTemplate: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } }[] }[] } };
    const agentRole = bare.spec.components[0]?.roles.find((r) => r.name === 'agent')?.podTemplate.spec;
    if (agentRole === undefined) throw new Error('fixture has no agent role');
    delete agentRole['initContainers'];
    agentRole['volumes'] = (agentRole['volumes'] as { name: string }[]).filter((v) => !v.name.startsWith('host-'));
    const main = agentRole.containers[0] as Record<string, unknown>;
    main['env'] = [];
    main['resources'] = {};
    main['volumeMounts'] = (main['volumeMounts'] as { name: string }[]).filter((m) => !m.name.startsWith('host-'));
    const pod = renderPods(bare as never, new Map([['lpu', nodeLocalV3HxConnected]]))['agt'] as Pod;
    const container = pod.containers[0] as Record<string, unknown>;
    expect((pod['initContainers'] as { name: string; command: string[] }[]).map((c) => [c.name, c.command])).toEqual([['prepare-lp30', ['/bin/lp30-agent-v2-init']]]);
    expect(container['resources']).toEqual({ limits: { 'nvidia.com/lpu': '16' }, requests: { 'nvidia.com/lpu': '16' } });
    expect((container['volumeMounts'] as { name: string; mountPath: string }[]).filter((m) => m.name.startsWith('host-'))).toEqual([{ name: 'host-sys', mountPath: '/sys' }, { name: 'host-dev', mountPath: '/dev' }]);
    expect(byName(pod.volumes).filter((v) => v.name.startsWith('host-'))).toEqual([
      { name: 'host-dev', hostPath: { path: '/dev', type: 'Directory' } },
      { name: 'host-sys', hostPath: { path: '/sys', type: 'Directory' } },
    ]);
    expect((container['env'] as { name: string }[]).filter((e) => e.name === 'BMC_SSH_ENABLED' || e.name === 'LPU_FPGA_RECONFIGURE_METHOD')).toEqual([{ name: 'BMC_SSH_ENABLED', value: 'false' }, { name: 'LPU_FPGA_RECONFIGURE_METHOD', value: 'cvp' }]);
  });

  it('HX Nova conductor: renamed "conductor"; LPX_MODEL_PATH /nfs/node-local-v3-hx-connected and LPX_ALLOCATION agt first, the NOVA_* env, the authored /bin/nova and HX --agent-env-vars args kept', () => {
    expect(nova['name']).toBe('conductor');
    expect(nova['command']).toEqual(['/bin/nova']);
    expect((nova['args'] as string[]).slice(-2)).toEqual(['--agent-env-vars', 'REDFISH_BMC_ENABLED=false']);
    const env = nova['env'] as { name: string; value?: string }[];
    expect(env.slice(0, 2)).toEqual([{ name: 'LPX_MODEL_PATH', value: '/nfs/node-local-v3-hx-connected' }, { name: 'LPX_ALLOCATION', value: 'agt' }]);
    expect(env.filter((e) => e.name.startsWith('NOVA_'))).toEqual([
      { name: 'NOVA_MODEL_BASE_PATHS', value: '/nfs' },
      { name: 'NOVA_MODEL_PATH', value: '$(LPX_MODEL_PATH)' },
      { name: 'NOVA_NODE_NAME_TEMPLATE', value: '${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-{rack}-{node}.${GROVE_HEADLESS_SERVICE}' },
      { name: 'NOVA_RESOLVED_PARTITIONS_DIR', value: '/configs' },
    ]);
  });
});

describe('LPX pod runtime contract: an HX build in a hybrid engine (upstream fixture node-local-v3-hx-hybrid.yaml, on node-local-v2-hybrid\'s templates)', () => {
  const pods = renderPods(nodeLocalV2Hybrid, new Map([['lpu', nodeLocalV3HxConnectedLpx]])) as Record<string, Pod>;
  const agentPod = pods['agt'] as Pod;
  const agent = agentPod.containers[0] as Record<string, unknown>;

  it('HX hybrid Agent: the direct hybrid runtime (cpu 62, hugepages-2Mi 4Gi, RDMA env, LPX_MODEL_PATH first) with nvidia.com/lpu 16 instead of lpu.nvidia.com/lpu (configureAgentScheduling); no prepare-lp30 and no LP30 env', () => {
    expect(agent['name']).toBe('agent');
    expect(agent['resources']).toEqual({ limits: { 'hugepages-2Mi': '4Gi', 'nvidia.com/lpu': '16' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi', 'nvidia.com/lpu': '16' } });
    const env = agent['env'] as { name: string; value?: string }[];
    expect(env[0]).toEqual({ name: 'LPX_MODEL_PATH', value: '/nfs/node-local-v3-hx-connected-lpx' });
    expect(env.filter((e) => ['GLUE_RDMA_PATH_MTU', 'NIC_NAME', 'RDMA_PORT', 'READINESS_PORT', 'UCX_TLS'].includes(e.name))).toEqual([
      { name: 'GLUE_RDMA_PATH_MTU', value: '1024' },
      { name: 'NIC_NAME', value: 'mlx5_0' },
      { name: 'RDMA_PORT', value: '19877' },
      { name: 'READINESS_PORT', value: '19878' },
      { name: 'UCX_TLS', value: 'tcp' },
    ]);
    expect(env.some((e) => e.name.startsWith('GROQ_'))).toBe(false);
    expect(agentPod['initContainers']).toBeUndefined();
  });

  it('HX hybrid Agent: host-sys at /sys and host-dev at /dev (addLPUHostDeviceVolumeMounts), the hostPath volumes and the huge pages kept', () => {
    const mounts = agent['volumeMounts'] as { name: string; mountPath: string }[];
    expect(mounts.filter((m) => ['host-sys', 'host-dev', 'hugepages'].includes(m.name)).map((m) => [m.name, m.mountPath]).sort()).toEqual([['host-dev', '/dev'], ['host-sys', '/sys'], ['hugepages', '/dev/hugepages']]);
    expect(byName(agentPod.volumes).filter((v) => ['host-dev', 'host-sys', 'hugepages'].includes(v.name))).toEqual([
      { name: 'host-dev', hostPath: { path: '/dev', type: 'Directory' } },
      { name: 'host-sys', hostPath: { path: '/sys', type: 'Directory' } },
      { name: 'hugepages', emptyDir: { medium: 'HugePages' } },
    ]);
  });
});

describe('LPX pod runtime contract: upstream testdata/from_dgd_yaml/node-local-v2-specdecode.input.yaml -> node-local-v2-specdecode.yaml', () => {
  const pods = renderPods(nodeLocalV2Specdecode, new Map([['draft', nodeLocalV2Connected], ['lpu', nodeLocalV2Connected]])) as Record<string, Pod>;
  const nova = (pods['cond'] as Pod).containers[0] as Record<string, unknown>;

  it('every Agent clique (agt0, agt1 for draft0, draft1; agt2 for the target) is an XT LPU-only Agent: renamed "agent", lpu.nvidia.com/lpu 8, cpu 62, huge pages, LPU_RUN_SYSTEM_INIT, POD_IP', () => {
    expect(Object.keys(pods)).toEqual(['agt0', 'agt1', 'agt2', 'cond']);
    for (const clique of ['agt0', 'agt1', 'agt2']) {
      const agent = (pods[clique] as Pod).containers[0] as Record<string, unknown>;
      const env = agent['env'] as { name: string; value?: string }[];
      expect([agent['name'], agent['command'], agent['args'], agent['resources'], env.find((e) => e.name === 'LPU_RUN_SYSTEM_INIT')?.value, env.some((e) => e.name === 'POD_IP')]).toEqual([
        'agent', ['/bin/quasar-entrypoint'], ['--partition-metadata'],
        { limits: { 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' } },
        'true', true,
      ]);
    }
  });

  it('the Nova conductor: renamed "conductor"; LPX_DRAFT_MODEL_PATH, LPX_TARGET_MODEL_PATH and LPX_ALLOCATION "agt0:agt1:agt2" first; NOVA_PIPELINE_TYPE SpecDecode, the draft/target NOVA_* paths and partition dirs; the authored security context kept', () => {
    expect(nova['name']).toBe('conductor');
    const env = nova['env'] as { name: string }[];
    expect(env.slice(0, 3)).toEqual([
      { name: 'LPX_DRAFT_MODEL_PATH', value: '/nfs/node-local-v2-connected' },
      { name: 'LPX_TARGET_MODEL_PATH', value: '/nfs/node-local-v2-connected' },
      { name: 'LPX_ALLOCATION', value: 'agt0:agt1:agt2' },
    ]);
    // The fixture's env apart from the order above, its test config's ETCD_ENDPOINTS/NATS_SERVER
    // and NOVA_MODEL_BASE_PATHS (the model-storage mount, from operator configuration).
    expect(byName(env)).toEqual(byName([
      { name: 'DYN_COMPONENT', value: 'lpx' },
      { name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' },
      { name: 'DYN_NAMESPACE', value: 'test-node-local-v2-specdecode' },
      { name: 'DYN_PARENT_DGD_K8S_NAME', value: 'node-local-v2-specdecode' },
      { name: 'DYN_PARENT_DGD_K8S_NAMESPACE', value: 'test' },
      { name: 'LPX_ALLOCATION', value: 'agt0:agt1:agt2' },
      { name: 'LPX_DRAFT_MODEL_PATH', value: '/nfs/node-local-v2-connected' },
      { name: 'LPX_TARGET_MODEL_PATH', value: '/nfs/node-local-v2-connected' },
      { name: 'NOVA_DRAFT_MODEL_PATH', value: '$(LPX_DRAFT_MODEL_PATH)' },
      { name: 'NOVA_DRAFT_RESOLVED_PARTITIONS_DIR', value: '/configs' },
      { name: 'NOVA_NODE_NAME_TEMPLATE', value: '${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-{rack}-{node}.${GROVE_HEADLESS_SERVICE}' },
      { name: 'NOVA_PIPELINE_TYPE', value: 'SpecDecode' },
      { name: 'NOVA_TARGET_MODEL_PATH', value: '$(LPX_TARGET_MODEL_PATH)' },
      { name: 'NOVA_TARGET_RESOLVED_PARTITIONS_DIR', value: '/configs' },
      { name: 'OMPI_ALLOW_RUN_AS_ROOT', value: '1' },
      { name: 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', value: '1' },
      { name: 'OMPI_MCA_plm_rsh_args', value: '-p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentityFile=/tmp/dynamo-lpu-ssh/private.key' },
      { name: 'POD_IP', ...fieldRef('status.podIP', 'v1') },
      { name: 'POD_NAME', ...fieldRef('metadata.name') },
      { name: 'POD_NAMESPACE', ...fieldRef('metadata.namespace') },
      { name: 'POD_UID', ...fieldRef('metadata.uid') },
    ]));
    expect([nova['command'], nova['securityContext'], (pods['cond'] as Pod)['schedulerName']]).toEqual([['/bin/nova'], { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false }, 'lpx-scheduler']);
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

describe('the single rules (upstream build.go buildRuntimePath, lpu_pod.go applyLPUWorkerContainerBase, runtime_agent.go setNodeLocalPodIPEnv)', () => {
  it.each([
    { name: 'a file:// build is at its URL path', reason: 'buildRuntimePath: BuildSchemeFile returns the URL path', input: 'file:///nfs/node-local-v2-connected/', want: '/nfs/node-local-v2-connected' },
    { name: 'an escaped file:// path is decoded', reason: 'buildRuntimePath returns the parsed path', input: 'file:///nfs/my%20build', want: '/nfs/my build' },
    { name: 'a gs:// build is under <model storage>/gcs/<bucket>/<object>', reason: 'buildRuntimePath: filepath.Join(modelStoragePath, "gcs", buildURL.Host, objectPath)', input: 'gs://bucket/builds/b1', want: '/nfs/gcs/bucket/builds/b1' },
    { name: 'a gs:// build without a model-storage mount has no path', reason: 'buildRuntimePath: "model storage path is empty"', input: 'gs://bucket/builds/b1', storage: '', want: undefined },
    { name: 'a gs:// build with a bad object segment has no path', reason: 'buildRuntimePath: "invalid GCS build path %q: bad path segment %q"', input: 'gs://bucket/builds/../b1', want: undefined },
    { name: 'a gs:// build without an object has no path', reason: 'buildRuntimePath: "invalid GCS build path %q: missing object path"', input: 'gs://bucket/', want: undefined },
    { name: 'another scheme has no path', reason: 'buildRuntimePath: "unsupported build path scheme %q"', input: 's3://bucket/b1', want: undefined },
    { name: 'a malformed escape gives no path and no exception', reason: 'bad input never throws', input: 'file:///nfs/%zz', want: undefined },
  ])('$name', ({ input, storage, want }) => {
    expect(lpxBuildRuntimePath({ path: input }, storage ?? '/nfs')).toBe(want);
  });

  it('configureAgentScheduling/stripLPUResources: an HX Agent loses every lpu.nvidia.com/* and nvidia.com/lpu resource, gets nvidia.com/lpu 16 in limits and requests, and keeps its other resources and claims', () => {
    const container = { name: 'main', resources: { limits: { 'lpu.nvidia.com/devices': '1', 'nvidia.com/lpu': '4', memory: '8Gi' }, requests: { 'lpu.nvidia.com/lpu': '8', cpu: '2' }, claims: [{ name: 'x' }] } };
    expect(withHxAgentDevices(container)['resources']).toEqual({ limits: { memory: '8Gi', 'nvidia.com/lpu': '16' }, requests: { cpu: '2', 'nvidia.com/lpu': '16' }, claims: [{ name: 'x' }] });
  });

  it('configureNodeLocalAgentWorkerContainer (HX): the LP30 env is operator-owned (an authored GROQ_PG613_PORT_CONFIG is replaced), other env kept, the security context replaced by privileged root', () => {
    const out = withLp30WorkerContainer({ name: 'main', env: [{ name: 'A', value: '1' }, { name: 'GROQ_PG613_PORT_CONFIG', value: 'EB1' }], securityContext: { privileged: false, capabilities: { add: ['SYS_ADMIN'] } } } as never);
    expect(out['env']?.filter((e) => e.name === 'A' || e.name === 'GROQ_PG613_PORT_CONFIG')).toEqual([{ name: 'A', value: '1' }, { name: 'GROQ_PG613_PORT_CONFIG', value: 'EB3' }]);
    expect(out['env']).toHaveLength(13);
    expect((out as Record<string, unknown>)['securityContext']).toEqual({ privileged: true, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false });
  });

  it('configureNodeLocalAgentWorkerContainer (HX): liveness, startup and lifecycle owned by the image are dropped; readiness is TCP 2222 after 10 s, every 5 s, timeout 1 s, 3 failures (lpuSSHProbe)', () => {
    const out = withLp30Probes({ name: 'main', livenessProbe: { exec: { command: ['x'] } }, startupProbe: { exec: { command: ['y'] } }, lifecycle: { preStop: { exec: { command: ['z'] } } }, readinessProbe: { httpGet: { path: '/ready', port: 80 } } } as never) as Record<string, unknown>;
    expect([out['livenessProbe'], out['startupProbe'], out['lifecycle']]).toEqual([undefined, undefined, undefined]);
    expect(out['readinessProbe']).toEqual({ failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, tcpSocket: { port: 2222 }, timeoutSeconds: 1 });
  });

  it('addLP30InitContainer (setContainerByName): an authored prepare-lp30 is replaced in place, other init containers stay in order without LPU resources; image and imagePullPolicy come from main', () => {
    const spec = {
      containers: [{ name: 'main', image: 'img:1', imagePullPolicy: 'Always' }],
      initContainers: [{ name: 'first', image: 'a', resources: { limits: { 'nvidia.com/lpu': '1', cpu: '1' } } }, { name: 'prepare-lp30', image: 'old', command: ['/bin/true'] }, { name: 'last', image: 'b' }],
    };
    const init = withLp30InitContainer(spec as never)['initContainers'] as Record<string, unknown>[];
    expect(init.map((c) => [c['name'], c['image']])).toEqual([['first', 'a'], ['prepare-lp30', 'img:1'], ['last', 'b']]);
    expect(init[0]?.['resources']).toEqual({ limits: { cpu: '1' } });
    expect([init[1]?.['imagePullPolicy'], init[1]?.['command']]).toEqual(['Always', ['/bin/lp30-agent-v2-init']]);
  });

  it('applyLPUWorkerContainerBase: a CPU limit below 62 becomes the request, a higher one leaves 62', () => {
    expect(withAgentResources({ name: 'main', resources: { limits: { cpu: '16' } } }, 8)['resources']).toEqual({ limits: { 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' }, requests: { cpu: '16', 'hugepages-2Mi': '4Gi', 'lpu.nvidia.com/lpu': '8' } });
    expect(withAgentResources({ name: 'main', resources: { limits: { cpu: '64000m' } } }, undefined)['resources']).toEqual({ limits: { cpu: '64000m', 'hugepages-2Mi': '4Gi' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi' } });
  });

  it('an operator-owned entry published first stays first when defaults are added; an authored POD_IP is kept', () => {
    const led = withLeadingEnv({ name: 'main', env: [{ name: 'A', value: '1' }, { name: 'Z', value: '2' }] }, 'LPX_MODEL_PATH', '/nfs/b');
    expect(withPodIpEnv(led)['env']?.map((e) => e.name)).toEqual(['LPX_MODEL_PATH', 'A', 'POD_IP', 'Z']);
    expect(withPodIpEnv({ name: 'main', env: [{ name: 'POD_IP', value: '10.0.0.1' }] })['env']).toEqual([{ name: 'POD_IP', value: '10.0.0.1' }]);
  });

  it('configureDirectHybridAgentRuntime: a hybrid Agent without them gets GLUE_RDMA_PATH_MTU, NIC_NAME, UCX_TLS, RDMA_PORT, READINESS_PORT; an authored value stays', () => {
    expect(withDirectHybridAgentEnv({ name: 'main', env: [{ name: 'NIC_NAME', value: 'mlx5_1' }] })['env']).toEqual([
      { name: 'GLUE_RDMA_PATH_MTU', value: '1024' },
      { name: 'NIC_NAME', value: 'mlx5_1' },
      { name: 'RDMA_PORT', value: '19877' },
      { name: 'READINESS_PORT', value: '19878' },
      { name: 'UCX_TLS', value: 'tcp' },
    ]);
  });
});
