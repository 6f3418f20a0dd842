/**
 * Upstream's LPX render fixtures node-local-v2-hybrid and node-local-v2-lpu-only as our types, shared by the pod runtime
 * contract's unit test and the Pod dry-run integration test: the input DGD
 * (`deploy/operator/internal/dynamo/lpx/testdata/from_dgd_yaml/node-local-v2-hybrid.input.yaml`,
 * values copied) and node-local-v2-lpu-only's, the builds they render with (compiler fixture `node-local-v2-connected-lpx`:
 * one 32-chip XT partition compiled for LPX; `node-local-v2-connected`: two 16-chip XT
 * partitions, LPU only), and a helper that renders the pod specs of its
 * LPX PodCliqueSet by clique name through the real derivations and runtime ConfigMaps.
 * @module
 */
import type { Dgd } from '../../shared/api/index.js';
import { deriveLpxWorkloads, lpxPodCliqueSetName, renderLpxPodCliqueSet, renderLpxRuntimeConfigs, resolveLpxWorkloads, type LpxBuild } from '../../shared/domain/lpx/index.js';

export const URSA_32C = 'URSA_V2__Q8__32C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA';

/** The build of upstream fixture node-local-v2-connected-lpx (compiler_fixture_test.go): one 32-chip XT partition, compiled for LPX (hybrid). */
export const nodeLocalV2ConnectedLpx: LpxBuild = {
  path: 'file:///nfs/node-local-v2-connected-lpx',
  family: 'xt8888',
  compilationMode: 'lpx',
  partitions: [{ sourcePartitionId: 0, partPath: 'part-0', topology: { raw: URSA_32C, chipCount: 32, nodeCount: 4 }, hxExtent: undefined }],
  selectedPropSyncChains: [],
  standaloneTokenEmbeddings: false,
  supportsCpuEmbeddings: false,
  ioFpgaCount: 1,
  ioFanoutFactor: 1,
  batchSize: 1,
  tokenEmbeddingsPath: undefined,
};

/** upstream testdata/from_dgd_yaml/node-local-v2-hybrid.input.yaml, as our Dgd. */
export const nodeLocalV2Hybrid: Dgd = {
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeployment',
  metadata: { name: 'node-local-v2-hybrid', namespace: 'test', uid: '22222222-2222-4222-8222-222222222222', generation: 1, annotations: { 'scheduling.lpu.nvidia.com/scheduler-backend': 'lpx-scheduler' } },
  spec: {
    components: [{
      name: 'lpu',
      type: 'lpx',
      replicas: 1,
      lpx: { buildId: 'node-local-v2-connected-lpx' },
      roles: [
        {
          name: 'conductor',
          replicas: 1,
          podTemplate: {
            spec: {
              resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'decode-gpu' }],
              containers: [{
                name: 'main',
                image: 'example.invalid/gpu-runtime:test',
                command: ['/usr/local/bin/cyborg-entrypoint', '--expand-hosts', '--', '/opt/gpu-runtime'],
                args: ['serve'],
                env: [
                  { name: 'RDMA_PORT', value: '19877' },
                  { name: 'SERVER_HOSTS_FILE', value: '/tmp/lpu_servers' },
                  { name: 'CYBORG_FPGA_GPI_REPLICA_INDEX', valueFrom: { fieldRef: { fieldPath: "metadata.labels['grove.io/podclique-pod-index']" } } },
                ],
                startupProbe: { failureThreshold: 720, httpGet: { path: '/live', port: 'system' }, periodSeconds: 10, timeoutSeconds: 5 },
                readinessProbe: { failureThreshold: 3, httpGet: { path: '/health', port: 'system' }, periodSeconds: 10, timeoutSeconds: 4 },
                livenessProbe: { failureThreshold: 1, httpGet: { path: '/live', port: 'system' }, periodSeconds: 5, timeoutSeconds: 4 },
                volumeMounts: [
                  { name: 'config', mountPath: '/configs' },
                  { name: 'infiniband', mountPath: '/dev/infiniband' },
                  { name: 'model-storage', mountPath: '/nfs' },
                ],
                resources: { claims: [{ name: 'gpu' }] },
              }],
              volumes: [
                { name: 'infiniband', hostPath: { path: '/dev/infiniband', type: 'Directory' } },
                { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
              ],
              securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' },
            },
          },
        },
        {
          name: 'agent',
          podTemplate: {
            spec: {
              containers: [{
                name: 'main',
                image: 'example.invalid/lpu-runtime:test',
                command: ['/opt/dynamo-lpu'],
                args: ['serve'],
                resources: { limits: { 'lpu.nvidia.com/devices': '1', 'hugepages-2Mi': '4Gi' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi' } },
                startupProbe: { failureThreshold: 60, httpGet: { path: '/readyz', port: 19878, scheme: 'HTTP' }, periodSeconds: 5, successThreshold: 1, timeoutSeconds: 1 },
                readinessProbe: { failureThreshold: 6, httpGet: { path: '/readyz', port: 19878, scheme: 'HTTP' }, periodSeconds: 5, successThreshold: 1, timeoutSeconds: 1 },
                env: [
                  { name: 'GAS_DIR', value: '$(LPX_MODEL_PATH)' },
                  { name: 'GLUE_RDMA_PATH_MTU', value: '1024' },
                  { name: 'NIC_NAME', value: 'mlx5_0' },
                  { name: 'UCX_TLS', value: 'tcp' },
                  { name: 'RDMA_PORT', value: '19877' },
                  { name: 'READINESS_PORT', value: '19878' },
                  { name: 'LPU_MODEL_NAME', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['scheduling.lpu.nvidia.com/model']" } } },
                ],
                volumeMounts: [
                  { mountPath: '/nfs', name: 'model-storage' },
                  { name: 'config', mountPath: '/configs' },
                  { name: 'hugepages', mountPath: '/dev/hugepages' },
                  { name: 'host-sys', mountPath: '/sys' },
                  { name: 'host-dev', mountPath: '/dev' },
                  { name: 'ssh-secret', mountPath: '/ssh-pk', readOnly: true },
                ],
                securityContext: { privileged: true },
              }],
              volumes: [
                { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
                { name: 'host-dev', hostPath: { path: '/dev', type: 'Directory' } },
                { name: 'host-sys', hostPath: { path: '/sys', type: 'Directory' } },
                { name: 'hugepages', emptyDir: { medium: 'HugePages' } },
                { name: 'ssh-secret', secret: { secretName: 'ssh-secret', defaultMode: 420 } },
              ],
              dnsPolicy: 'ClusterFirstWithHostNet',
              hostIPC: true,
              hostNetwork: true,
              securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' },
              tolerations: [{ key: 'lpu.nvidia.com/node', operator: 'Exists' }],
            },
          },
        },
      ],
    }] as Dgd['spec']['components'],
  },
};

/** The LPXGD identity of upstream's render fixtures: the DGD's namespace and name, uid `lpx-render-uid`. */
export function fixtureLpxIdentity(dgd: Dgd): { namespace: string; name: string; uid: string } {
  return { namespace: dgd.metadata.namespace ?? 'test', name: dgd.metadata.name ?? '', uid: 'lpx-render-uid' };
}

/** The pod specs of the DGD's LPX PodCliqueSet by clique name, rendered with `builds` (by component name). Throws on a derivation error (a test fixture is valid). */
export function renderLpxPods(dgd: Dgd, builds: ReadonlyMap<string, LpxBuild>): Record<string, Record<string, unknown>> {
  const id = fixtureLpxIdentity(dgd);
  const decoded = new Map([...builds].map(([component, build]) => [component, { build, buildId: 'fixture' }]));
  const workloads = deriveLpxWorkloads(dgd, resolveLpxWorkloads(dgd), decoded);
  if (!workloads.ok) throw new Error(workloads.error);
  const runtime = renderLpxRuntimeConfigs(lpxPodCliqueSetName(id), workloads.value, builds);
  if (!runtime.ok) throw new Error(runtime.error);
  const pcs = renderLpxPodCliqueSet(dgd, id, workloads.value, new Map(), { terminationDelay: '15m' }, new Map(), runtime.configs, builds) as unknown as { spec: { template: { cliques: { name: string; spec: { podSpec: Record<string, unknown> } }[] } } };
  return Object.fromEntries(pcs.spec.template.cliques.map((c) => [c.name, c.spec.podSpec]));
}


export const URSA_16C = 'URSA_V2__Q8__16C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA';

/** The build of upstream compiler fixture node-local-v2-connected: two 16-chip XT partitions (2 Agents each), LPU only. */
export const nodeLocalV2Connected: LpxBuild = {
  ...nodeLocalV2ConnectedLpx,
  path: 'file:///nfs/node-local-v2-connected',
  compilationMode: 'lpuOnly',
  partitions: [0, 1].map((id) => ({ sourcePartitionId: id, partPath: `part-${id}`, topology: { raw: URSA_16C, chipCount: 16, nodeCount: 2 }, hxExtent: undefined })),
};

const novaArgs = [
  'serve', '--mpirun-path', '/bin/mpirun', '--mpi-ssh-cmd', 'ssh -p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -i /tmp/dynamo-lpu-ssh/private.key',
  '--agent-wd', '/tmp', '--conductor-bind-host', '0.0.0.0', '--conductor-hostname', '$(POD_IP)', '--control-server-addr', '$(POD_IP):51045', '--json-logs', '--disable-tracing',
  '--mpi-use-tcp', '--agent-disable-auto-restart', '--agent-server-max-retries', '60', '--agent-server-retry-sleep-dur', '2s', '--graceful-shutdown-timeout', '0s',
  '--response-timeout', '120s', '--frontend-type', 'dynamo', '--endpoint-id', 'dyn://$(DYN_NAMESPACE).backend.generate', '--store-backend', 'kubernetes', '--allocation', '$(LPX_ALLOCATION)',
];

/** upstream testdata/from_dgd_yaml/node-local-v2-lpu-only.input.yaml, as our Dgd. */
export const nodeLocalV2LpuOnly: Dgd = {
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeployment',
  metadata: { name: 'node-local-v2-lpu-only', namespace: 'test', uid: '11111111-1111-4111-8111-111111111111', generation: 1 },
  spec: {
    components: [{
      name: 'lpu',
      type: 'lpx',
      replicas: 1,
      lpx: { buildId: 'node-local-v2-connected' },
      roles: [
        {
          name: 'conductor',
          podTemplate: {
            spec: {
              containers: [{
                name: 'main',
                image: 'example.invalid/lpu-runtime:test',
                command: ['/opt/dynamo-lpu'],
                args: novaArgs,
                env: [
                  { name: 'NOVA_MODEL_PATH', value: '$(LPX_MODEL_PATH)' },
                  { name: 'NOVA_MODEL_BASE_PATHS', value: '/nfs' },
                  { name: 'OMPI_ALLOW_RUN_AS_ROOT', value: '1' },
                  { name: 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', value: '1' },
                  { name: 'OMPI_MCA_plm_rsh_args', value: '-p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentityFile=/tmp/dynamo-lpu-ssh/private.key' },
                ],
                readinessProbe: { httpGet: { path: '/readyz', port: 51045, scheme: 'HTTP' }, failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, timeoutSeconds: 1 },
                volumeMounts: [{ name: 'model-storage', mountPath: '/nfs' }, { name: 'single-v2-ssh-key', mountPath: '/tmp/dynamo-lpu-ssh' }],
              }],
              initContainers: [{
                args: ['-m', '0600', '/ssh-pk/private.key', '/tmp/dynamo-lpu-ssh/private.key'],
                command: ['/bin/install'],
                image: 'example.invalid/lpu-runtime:test',
                name: 'prepare-ssh-key',
                volumeMounts: [{ mountPath: '/tmp/dynamo-lpu-ssh', name: 'single-v2-ssh-key' }, { mountPath: '/ssh-pk', name: 'ssh-secret', readOnly: true }],
              }],
              volumes: [
                { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
                { name: 'ssh-secret', secret: { secretName: 'ssh-secret', defaultMode: 384 } },
                { name: 'single-v2-ssh-key', emptyDir: {} },
              ],
              securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' },
            },
          },
        },
        {
          name: 'agent',
          podTemplate: {
            spec: {
              containers: [{
                name: 'main',
                image: 'example.invalid/lpu-runtime:test',
                command: ['/opt/dynamo-lpu'],
                args: ['serve'],
                resources: { limits: { 'lpu.nvidia.com/devices': '1', 'hugepages-2Mi': '4Gi' }, requests: { cpu: '62', 'hugepages-2Mi': '4Gi' } },
                readinessProbe: { failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, tcpSocket: { port: 2222 }, timeoutSeconds: 1 },
                env: [{ name: 'LPU_RUN_SYSTEM_INIT', value: 'true' }],
                volumeMounts: [
                  { mountPath: '/nfs', name: 'model-storage' },
                  { name: 'host-dev', mountPath: '/dev' },
                  { name: 'host-sys', mountPath: '/sys' },
                  { name: 'ssh-secret', mountPath: '/ssh-pk', readOnly: true },
                  { name: 'hugepages', mountPath: '/dev/hugepages' },
                ],
                securityContext: { privileged: true },
              }],
              volumes: [
                { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
                { name: 'host-dev', hostPath: { path: '/dev', type: 'Directory' } },
                { name: 'host-sys', hostPath: { path: '/sys', type: 'Directory' } },
                { name: 'hugepages', emptyDir: { medium: 'HugePages' } },
                { name: 'ssh-secret', secret: { secretName: 'ssh-secret', defaultMode: 420 } },
              ],
              dnsPolicy: 'ClusterFirstWithHostNet',
              hostIPC: true,
              hostNetwork: true,
              securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' },
              tolerations: [{ key: 'lpu.nvidia.com/node', operator: 'Exists' }],
            },
          },
        },
      ],
    }] as Dgd['spec']['components'],
  },
};

const lp30Env = [
  { name: 'BMC_SSH_ENABLED', value: 'false' },
  { name: 'LPU_FPGA_AUTOMATIC_JTAG_RECOVERY', value: 'false' },
  { name: 'LPU_FPGA_RECONFIGURE_METHOD', value: 'cvp' },
  { name: 'REDFISH_BMC_ENABLED', value: 'false' },
];
const hxAgentEnvArgs = [
  'BMC_SSH_ENABLED=false', 'LPU_FPGA_AUTOMATIC_JTAG_RECOVERY=false', 'LPU_FPGA_RECONFIGURE_METHOD=cvp', 'LPU_PARTITION_RUNNER_DATAPLANE=pcie', 'LPU_PARTITION_RUNNER_PCIE_SOURCE_PORT=33000',
  'LPU_RUNNER_OUTSTANDING_TASK_DRAIN_TIMEOUT_SECONDS=10', 'LPU_VSAP_DIB_BARRIER_BEFORE_PUSH_ENABLED=true', 'LPU_VSAP_MAX_TENSORS_PER_CHUNK=4', 'REDFISH_BMC_ENABLED=false',
].flatMap((value) => ['--agent-env-vars', value]);

/** The build of upstream compiler fixture node-local-v3-hx-connected: one HX partition (id 1, extent [16,1,1,1], one Agent), LPU only. */
export const nodeLocalV3HxConnected: LpxBuild = {
  ...nodeLocalV2Connected,
  path: 'file:///nfs/node-local-v3-hx-connected',
  family: 'hx16x8x2x3',
  partitions: [{ sourcePartitionId: 1, partPath: 'part-1', topology: { raw: 'opaque-v3-topology', chipCount: 16, nodeCount: 1 }, hxExtent: [16, 1, 1, 1] }],
};

/** The build of upstream fixture node-local-v3-hx-connected-lpx (node-local-v3-hx-hybrid.yaml's LPX_MODEL_PATH): one HX partition (id 1, extent [16,1,1,1]), compiled for LPX (hybrid). */
export const nodeLocalV3HxConnectedLpx: LpxBuild = {
  ...nodeLocalV2ConnectedLpx,
  path: 'file:///nfs/node-local-v3-hx-connected-lpx',
  family: 'hx16x8x2x3',
  partitions: [{ sourcePartitionId: 1, partPath: 'part-1', topology: { raw: 'opaque-v3-topology', chipCount: 16, nodeCount: 1 }, hxExtent: [16, 1, 1, 1] }],
};

/** upstream testdata/from_dgd_yaml/node-local-v3-hx-lpu-only.input.yaml, as our Dgd: node-local-v2-lpu-only's templates with the HX image-owned startup. */
export const nodeLocalV3HxLpuOnly: Dgd = (() => {
  const dgd = structuredClone(nodeLocalV2LpuOnly) as Dgd & { spec: { components: { roles: { name: string; podTemplate: { spec: Record<string, unknown> } }[] }[] } };
  dgd.metadata = { name: 'node-local-v3-hx-lpu-only', namespace: 'test', uid: '33333333-3333-4333-8333-333333333333', generation: 1 };
  const component = dgd.spec.components[0] as unknown as { lpx: { buildId: string }; roles: { name: string; podTemplate: { spec: Record<string, unknown> } }[] };
  component.lpx = { buildId: 'node-local-v3-hx-connected' };
  const [conductor, agent] = component.roles.map((r) => r.podTemplate.spec as { containers: Record<string, unknown>[]; initContainers?: unknown[] });
  const nova = conductor?.containers[0];
  if (nova !== undefined) {
    nova['command'] = ['/bin/nova'];
    nova['args'] = ['--instance-model-name', 'test/llama32-1b-lp30', ...novaArgs.slice(1), ...hxAgentEnvArgs];
  }
  const lpu = agent?.containers[0];
  if (agent !== undefined && lpu !== undefined) {
    Object.assign(lpu, {
      args: [],
      command: ['/bin/quasar-entrypoint'],
      resources: { limits: { 'lpu.nvidia.com/devices': '1' } },
      env: lp30Env,
      volumeMounts: [
        { mountPath: '/nfs', name: 'model-storage' },
        { name: 'host-dev', mountPath: '/dev' },
        { name: 'host-sys', mountPath: '/sys' },
        { name: 'ssh-secret', mountPath: '/ssh-pk', readOnly: true },
      ],
    });
    agent.initContainers = [{
      command: ['/bin/lp30-agent-v2-init'],
      env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
      image: 'example.invalid/lpu-runtime:test',
      name: 'prepare-lp30',
      securityContext: { privileged: true },
      volumeMounts: [{ mountPath: '/sys', name: 'host-sys' }, { mountPath: '/dev', name: 'host-dev' }],
    }];
    (agent as Record<string, unknown>)['volumes'] = ((agent as Record<string, unknown>)['volumes'] as { name: string }[]).filter((v) => v.name !== 'hugepages');
  }
  return dgd;
})();

/** upstream testdata/from_dgd_yaml/node-local-v2-specdecode.input.yaml, as our Dgd: a shared pair, two drafts and the target on node-local-v2-connected. */
export const nodeLocalV2Specdecode: Dgd = (() => {
  const agentTemplate = {
    spec: {
      containers: [{
        name: 'main',
        image: 'example.invalid/lpu-runtime:test',
        resources: { limits: { 'lpu.nvidia.com/devices': '1' } },
        command: ['/bin/quasar-entrypoint'],
        args: ['--partition-metadata'],
        readinessProbe: { failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, tcpSocket: { port: 2222 }, timeoutSeconds: 1 },
        env: [{ name: 'LPU_RUN_SYSTEM_INIT', value: 'true' }],
        volumeMounts: [
          { mountPath: '/nfs', name: 'model-storage' },
          { name: 'config', mountPath: '/configs' },
          { name: 'host-dev', mountPath: '/dev' },
          { name: 'host-sys', mountPath: '/sys' },
          { name: 'ssh-secret', mountPath: '/ssh-pk', readOnly: true },
          { name: 'hugepages', mountPath: '/dev/hugepages' },
        ],
      }],
      volumes: [
        { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
        { name: 'host-dev', hostPath: { path: '/dev', type: 'Directory' } },
        { name: 'host-sys', hostPath: { path: '/sys', type: 'Directory' } },
        { name: 'hugepages', emptyDir: { medium: 'HugePages' } },
        { name: 'ssh-secret', secret: { secretName: 'ssh-secret', defaultMode: 420 } },
      ],
    },
  };
  const root = { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false };
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'node-local-v2-specdecode', namespace: 'test', uid: '33333333-3333-4333-8333-333333333333', generation: 1, annotations: { 'scheduling.lpu.nvidia.com/scheduler-backend': 'lpx-scheduler' } },
    spec: {
      components: [
        { name: 'draft', type: 'lpx', replicas: 2, lpx: { buildId: 'node-local-v2-connected' }, roles: [{ name: 'agent', podTemplate: structuredClone(agentTemplate) }] },
        {
          name: 'lpu',
          type: 'lpx',
          replicas: 1,
          lpx: { buildId: 'node-local-v2-connected' },
          roles: [
            {
              name: 'conductor',
              podTemplate: {
                spec: {
                  containers: [{
                    name: 'main',
                    image: 'example.invalid/lpu-runtime:test',
                    command: ['/bin/nova'],
                    args: [...novaArgs.slice(1, 13), '--datacenter-config-filepath', '/configs/datacenter.toml', '--model-config-filepath', '/configs/model_config.toml', ...novaArgs.slice(13)],
                    env: [
                      { name: 'OMPI_ALLOW_RUN_AS_ROOT', value: '1' },
                      { name: 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', value: '1' },
                      { name: 'OMPI_MCA_plm_rsh_args', value: '-p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentityFile=/tmp/dynamo-lpu-ssh/private.key' },
                    ],
                    readinessProbe: { httpGet: { path: '/readyz', port: 51045, scheme: 'HTTP' }, failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, timeoutSeconds: 1 },
                    securityContext: root,
                    volumeMounts: [{ name: 'model-storage', mountPath: '/nfs' }, { name: 'config', mountPath: '/configs' }, { name: 'single-v2-ssh-key', mountPath: '/tmp/dynamo-lpu-ssh' }],
                  }],
                  initContainers: [{
                    args: ['-m', '0600', '/ssh-pk/private.key', '/tmp/dynamo-lpu-ssh/private.key'],
                    command: ['/bin/install'],
                    image: 'example.invalid/lpu-runtime:test',
                    name: 'prepare-ssh-key',
                    securityContext: root,
                    volumeMounts: [{ mountPath: '/tmp/dynamo-lpu-ssh', name: 'single-v2-ssh-key' }, { mountPath: '/ssh-pk', name: 'ssh-secret', readOnly: true }],
                  }],
                  volumes: [
                    { name: 'model-storage', persistentVolumeClaim: { claimName: 'model-storage' } },
                    { name: 'ssh-secret', secret: { secretName: 'ssh-secret', defaultMode: 384 } },
                    { name: 'single-v2-ssh-key', emptyDir: {} },
                  ],
                },
              },
            },
            { name: 'agent', podTemplate: structuredClone(agentTemplate) },
          ],
        },
      ] as Dgd['spec']['components'],
    },
  };
})();
