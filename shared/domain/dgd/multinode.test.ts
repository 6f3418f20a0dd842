/**
 * Multinode launch rules, with the expected values of upstream's tests:
 * `internal/dynamo/backend_sglang_test.go` (TestSGLangBackend_PythonCommandInjection,
 * TestSGLangBackend_ShellCommandInjection, TestIsPythonCommand),
 * `backend_vllm_test.go` (TestVLLMBackend_UpdateContainer rows for mp and ray),
 * `backend_trtllm_test.go` (TestShellQuoteForBashC, TestTRTLLMBackend_UpdateContainer).
 */
import { describe, expect, it } from 'vitest';
import type { Container } from '../../api/index.js';
import { applySglangMultinode, applyTrtllmMultinode, applyVllmMultinode, injectFlags, isPythonCommand, shellQuote, type MultinodeContext } from './multinode.js';

const LEADER = '$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE)';
const ctxOf = (overrides: Partial<MultinodeContext> = {}): MultinodeContext => ({
  component: { name: 'test-service' },
  role: 'leader',
  nodeCount: 2,
  topologyAliases: false,
  vllmMultiprocessing: true,
  mpiSshSecretName: 'mpi-run-ssh-secret',
  ...overrides,
});
const probes = { livenessProbe: { httpGet: { path: '/live', port: 'system' } }, readinessProbe: { httpGet: { path: '/health', port: 'system' } }, startupProbe: { httpGet: { path: '/live', port: 'system' } } };

describe('injectFlags (upstream injectFlagsIntoContainerCommand; rows of TestSGLangBackend_PythonCommandInjection with its mock deployers)', () => {
  it.each([
    {
      name: 'python command simple deployer - direct append',
      command: ['python3'], args: ['-m', 'dynamo.sglang', '--model', 'llama'], flags: '--dist-init-addr leader.example.com:29500 --nnodes 2 --node-rank 1', needsShell: false,
      want: { command: ['python3'], args: ['-m', 'dynamo.sglang', '--model', 'llama', '--dist-init-addr', 'leader.example.com:29500', '--nnodes', '2', '--node-rank', '1'] },
    },
    {
      name: 'python command shell deployer - shell wrapping',
      command: ['python3'], args: ['-m', 'dynamo.sglang', '--model', 'llama'], flags: '--dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)', needsShell: true,
      want: { command: ['sh', '-c'], args: ['exec python3 -m dynamo.sglang --model llama --dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)'] },
    },
    {
      name: 'pyenv shims python command supported',
      command: ['/home/user/.pyenv/shims/python3.9'], args: ['-m', 'dynamo.sglang'], flags: '--dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)', needsShell: true,
      want: { command: ['sh', '-c'], args: ['exec /home/user/.pyenv/shims/python3.9 -m dynamo.sglang --dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)'] },
    },
    {
      name: 'python command with no args - shell deployer',
      command: ['python3', '-m', 'dynamo.sglang'], args: [], flags: '--dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)', needsShell: true,
      want: { command: ['sh', '-c'], args: ['exec python3 -m dynamo.sglang --dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)'] },
    },
    {
      name: 'non-python command multinode unchanged',
      command: ['java'], args: ['-jar', 'app.jar'], flags: '--nnodes 2', needsShell: true,
      want: { command: ['java'], args: ['-jar', 'app.jar'] },
    },
  ])('$name', ({ command, args, flags, needsShell, want }) => {
    const container: Container = { name: 'main', command: [...command], args: [...args] };
    injectFlags(container, flags, needsShell, 'sglang');
    expect({ command: container.command, args: container.args }).toEqual(want);
  });
});

describe('applySglangMultinode on Grove (rows of TestSGLangBackend_ShellCommandInjection, service "test-service")', () => {
  it.each([
    { name: 'multinode shell command with regex injection', role: 'leader' as const, nodeCount: 2, args: ['python -m dynamo.sglang'], want: [`python -m dynamo.sglang --dist-init-addr ${LEADER}:29500 --nnodes 2 --node-rank 0`] },
    { name: 'multinode shell command with complex pipeline', role: 'leader' as const, nodeCount: 2, args: ['echo blah | wc -l && python -m dynamo.sglang && ls -al'], want: [`echo blah | wc -l && python -m dynamo.sglang --dist-init-addr ${LEADER}:29500 --nnodes 2 --node-rank 0 && ls -al`] },
    { name: 'shell command worker with grove env vars', role: 'worker' as const, nodeCount: 3, args: ['python -m dynamo.sglang'], want: [`python -m dynamo.sglang --dist-init-addr ${LEADER}:29500 --nnodes 3 --node-rank $((GROVE_PCLQ_POD_INDEX + 1))`] },
    { name: 'shell command with pipes', role: 'leader' as const, nodeCount: 2, args: ['python -m dynamo.sglang | tee /tmp/log'], want: [`python -m dynamo.sglang --dist-init-addr ${LEADER}:29500 --nnodes 2 --node-rank 0 | tee /tmp/log`] },
    { name: 'shell command stops after first python injection', role: 'leader' as const, nodeCount: 2, args: ['python -m dynamo.sglang', 'python -m dynamo.sglang --other-flags'], want: [`python -m dynamo.sglang --dist-init-addr ${LEADER}:29500 --nnodes 2 --node-rank 0`, 'python -m dynamo.sglang --other-flags'] },
    { name: 'shell command no sglang modules unchanged', role: 'leader' as const, nodeCount: 2, args: ['echo hello', 'python -m some.other.module'], want: ['echo hello', 'python -m some.other.module'] },
  ])('$name', ({ role, nodeCount, args, want }) => {
    const container: Container = { name: 'main', command: ['sh', '-c'], args: [...args] };
    applySglangMultinode(container, ctxOf({ role, nodeCount }));
    expect({ command: container.command, args: container.args }).toEqual({ command: ['sh', '-c'], args: want });
  });

  it('removes every probe of a worker and keeps the leader probes (upstream MultinodePodWiring applies to WorkerRole)', () => {
    const worker: Container = { name: 'main', command: ['sh', '-c'], args: ['python -m dynamo.sglang'], ...structuredClone(probes) };
    const leader: Container = { name: 'main', command: ['sh', '-c'], args: ['python -m dynamo.sglang'], ...structuredClone(probes) };
    applySglangMultinode(worker, ctxOf({ role: 'worker' }));
    applySglangMultinode(leader, ctxOf({ role: 'leader' }));
    expect([worker.livenessProbe, worker.readinessProbe, worker.startupProbe]).toEqual([undefined, undefined, undefined]);
    expect(leader.livenessProbe).toEqual(probes.livenessProbe);
  });

  it('names $(DYNAMO_LEADER_ADDRESS) and $(DYNAMO_RANK) without a shell for DGDs of origin >= 1.6.0 (upstream docs: "For SGLang, it uses them for --dist-init-addr and --node-rank")', () => {
    const container: Container = { name: 'main', command: ['python3', '-m', 'dynamo.sglang'], args: ['--tp', '16'] };
    applySglangMultinode(container, ctxOf({ role: 'worker', topologyAliases: true }));
    expect({ command: container.command, args: container.args }).toEqual({
      command: ['python3', '-m', 'dynamo.sglang'],
      args: ['--tp', '16', '--dist-init-addr', '$(DYNAMO_LEADER_ADDRESS):29500', '--nnodes', '2', '--node-rank', '$(DYNAMO_RANK)'],
    });
  });
});

describe('isPythonCommand (TestIsPythonCommand)', () => {
  it.each([
    { name: 'python3.12.1', command: 'python3.12.1', want: true },
    { name: '/usr/local/bin/python3.12.1', command: '/usr/local/bin/python3.12.1', want: true },
    { name: '../bin/python', command: '../bin/python', want: true },
    { name: 'python-config (hyphen)', command: 'python-config', want: false },
    { name: 'empty', command: '', want: false },
    { name: '"python " (space)', command: 'python ', want: false },
    { name: 'sh', command: 'sh', want: false },
  ])('$name -> $want', ({ command, want }) => expect(isPythonCommand(command)).toBe(want));
});

describe('shellQuote (TestShellQuoteForBashC)', () => {
  it.each([
    { name: 'Simple flag - no quoting needed', input: '--model-path', want: '--model-path' },
    { name: 'Empty string - no quoting needed', input: '', want: '' },
    { name: 'JSON override-engine-args (primary use case)', input: '{"load_format": "DUMMY", "tensor_parallel_size": 8}', want: '"{\\"load_format\\": \\"DUMMY\\", \\"tensor_parallel_size\\": 8}"' },
    { name: 'String with dollar sign is escaped', input: '$HOME/path', want: '"\\$HOME/path"' },
    { name: 'String with backtick is escaped', input: 'hello `world`', want: '"hello \\`world\\`"' },
    { name: 'Backslash is escaped first to avoid double-escaping', input: 'path\\to\\file', want: '"path\\\\to\\\\file"' },
    { name: 'Single quote breaks out of outer bash -c context', input: "it's", want: `"it'"'"'s"` },
  ])('$name', ({ input, want }) => expect(shellQuote(input)).toBe(want));
});

describe('applyVllmMultinode (rows of TestVLLMBackend_UpdateContainer; Grove deployer, service "test-service")', () => {
  const gpus = (n: number) => ({ limits: { 'nvidia.com/gpu': String(n) } });
  it.each([
    {
      name: 'multinode leader uses mp (origin version >= threshold)',
      role: 'leader' as const, mp: true, command: ['python3'], args: ['-m', 'dynamo.vllm', '--tensor-parallel-size', '16'], gpu: 8,
      want: { command: ['python3'], args: ['-m', 'dynamo.vllm', '--tensor-parallel-size', '16', '--distributed-executor-backend', 'mp', '--nnodes', '2', '--master-addr', LEADER, '--master-port', '29500', '--node-rank', '0'] },
    },
    {
      name: 'multinode worker uses mp (origin version >= threshold) Grove',
      role: 'worker' as const, mp: true, command: ['python3'], args: ['-m', 'dynamo.vllm', '--tensor-parallel-size', '16'], gpu: 8,
      want: { command: ['sh', '-c'], args: [`exec python3 -m dynamo.vllm --tensor-parallel-size 16 --distributed-executor-backend mp --nnodes 2 --master-addr ${LEADER} --master-port 29500 --node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless`] },
    },
    {
      name: 'multinode leader uses ray (explicit override despite new version)',
      role: 'leader' as const, mp: false, command: ['python3', '-m', 'dynamo.vllm'], args: ['--model', 'test', '--tensor-parallel-size', '8'], gpu: 4,
      want: { command: ['/bin/sh', '-c'], args: ['ray start --head --port=6379 && python3 -m dynamo.vllm --model test --tensor-parallel-size 8 --distributed-executor-backend ray'] },
    },
    {
      name: 'multinode worker uses ray (no annotations = legacy)',
      role: 'worker' as const, mp: false, command: ['python3'], args: ['-m', 'dynamo.vllm', '--model', 'test', '--tensor-parallel-size', '8'], gpu: 4,
      want: { command: ['/bin/sh', '-c'], args: [`ray start --address=${LEADER}:6379 --block`] },
    },
  ])('$name', ({ role, mp, command, args, gpu, want }) => {
    const container: Container = { name: 'main', command, args, resources: gpus(gpu), ...structuredClone(probes) };
    applyVllmMultinode(container, {}, ctxOf({ role, vllmMultiprocessing: mp }));
    expect({ command: container.command, args: container.args }).toEqual(want);
  });

  it('quotes JSON args of a Ray leader (row "multinode leader uses ray ... kv-transfer-config")', () => {
    const container: Container = { name: 'main', command: ['python3', '-m', 'dynamo.vllm'], args: ['--model', 'test', '--tensor-parallel-size', '8', '--kv-transfer-config', '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'], resources: gpus(4) };
    applyVllmMultinode(container, {}, ctxOf({ role: 'leader', vllmMultiprocessing: false }));
    expect(container.args).toEqual(['ray start --head --port=6379 && python3 -m dynamo.vllm --model test --tensor-parallel-size 8 --kv-transfer-config "{\\"kv_connector\\": \\"NixlConnector\\", \\"kv_role\\": \\"kv_both\\"}" --distributed-executor-backend ray']);
  });

  it('gives an mp worker the wait-for-leader-mp init container on the main image, VLLM_NIXL_SIDE_CHANNEL_HOST from status.podIP, and no probes', () => {
    const container: Container = { name: 'main', image: 'vllm-runtime:1.6.0', command: ['python3'], args: ['-m', 'dynamo.vllm', '--tensor-parallel-size', '16'], resources: gpus(8), ...structuredClone(probes) };
    const podSpec: { initContainers?: Container[] } = {};
    applyVllmMultinode(container, podSpec, ctxOf({ role: 'worker' }));
    expect(podSpec.initContainers?.map((c) => [c.name, c.image, c.command?.slice(0, 2)])).toEqual([['wait-for-leader-mp', 'vllm-runtime:1.6.0', ['python3', '-c']]]);
    expect(podSpec.initContainers?.[0]?.command?.[2]).toContain(`host, port = "${LEADER}", 29500`);
    expect(container.env).toEqual([{ name: 'VLLM_NIXL_SIDE_CHANNEL_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }]);
    expect([container.livenessProbe, container.readinessProbe, container.startupProbe]).toEqual([undefined, undefined, undefined]);
  });

  it('injects data-parallel flags when TP x PP fits a node but TP x PP x DP does not; local size = GPUs / (TP x PP) (upstream injectDataParallelLaunchFlags)', () => {
    const leader: Container = { name: 'main', command: ['python3'], args: ['-m', 'dynamo.vllm', '--tensor-parallel-size', '2'], resources: gpus(8) };
    applyVllmMultinode(leader, {}, ctxOf({ role: 'leader', nodeCount: 2, vllmMultiprocessing: false }));
    // Without --data-parallel-size, TP x PP x DP = 2 fits the 8 GPUs: nothing is injected.
    expect(leader.args).toEqual(['-m', 'dynamo.vllm', '--tensor-parallel-size', '2']);
    const worker: Container = { name: 'main', command: ['python3'], args: ['-m', 'dynamo.vllm', '--tensor-parallel-size', '2', '--data-parallel-size', '8'], resources: gpus(8) };
    applyVllmMultinode(worker, {}, ctxOf({ role: 'worker', nodeCount: 2, vllmMultiprocessing: false }));
    expect(worker).toMatchObject({
      command: ['sh', '-c'],
      args: [`exec python3 -m dynamo.vllm --tensor-parallel-size 2 --data-parallel-size 8 --data-parallel-hybrid-lb --data-parallel-size-local 4 --data-parallel-start-rank $(( 4 * $((GROVE_PCLQ_POD_INDEX + 1)) )) --data-parallel-address ${LEADER} --data-parallel-rpc-port 13445`],
    });
  });
});

describe('applyTrtllmMultinode (TestTRTLLMBackend_UpdateContainer, secret "mpi-run-ssh-secret", service "test-service")', () => {
  const sshSetup =
    "cp /ssh-pk/private.key $HOME/.ssh/id_rsa && cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub && cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys && chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys && chmod 644 $HOME/.ssh/id_rsa.pub && printf 'Host *\\nIdentityFile '$HOME'/.ssh/id_rsa\\nStrictHostKeyChecking no\\nPort 2222\\n' > $HOME/.ssh/config";

  it('Multinode leader with GPU resources: SSH setup then mpirun -n 6 over the three Grove hosts, exporting the common and container env', () => {
    const container: Container = { name: 'main', args: ['python3', '--model', 'test'], resources: { requests: { 'nvidia.com/gpu': '2' } }, ...structuredClone(probes) };
    const podSpec: { volumes?: Record<string, unknown>[] } = {};
    applyTrtllmMultinode(container, podSpec, ctxOf({ role: 'leader', nodeCount: 3 }));
    const hosts = `${LEADER},$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-wkr-0.$(GROVE_HEADLESS_SERVICE),$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-wkr-1.$(GROVE_HEADLESS_SERVICE)`;
    expect(container.command).toEqual(['/bin/sh', '-c']);
    expect(container.args).toEqual([
      `mkdir -p $HOME/.ssh && ls -la /ssh-pk/ && ${sshSetup} && mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe -n 6 -H ${hosts} --mca pml ob1 --mca plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa" -x CUDA_VISIBLE_DEVICES -x HF_DATASETS_CACHE -x HF_ENDPOINT -x HF_HOME -x HF_TOKEN -x HOME -x HUGGING_FACE_HUB_TOKEN -x LD_LIBRARY_PATH -x MODEL_PATH -x NCCL_DEBUG -x NCCL_IB_DISABLE -x NCCL_P2P_DISABLE -x OMPI_MCA_orte_keep_fqdn_hostnames -x PATH -x PYTHONPATH -x TENSORRT_LLM_CACHE_DIR -x TOKENIZERS_PARALLELISM -x TRANSFORMERS_CACHE -x TRTLLM_USE_UCX_KVCACHE -x USER bash -c 'trtllm-llmapi-launch python3 --model test'`,
    ]);
    expect(container.env).toEqual([{ name: 'OMPI_MCA_orte_keep_fqdn_hostnames', value: '1' }]);
    expect(container.volumeMounts).toEqual([{ name: 'mpi-run-ssh-secret', mountPath: '/ssh-pk', readOnly: true }]);
    expect(container.livenessProbe).toEqual(probes.livenessProbe);
    expect(podSpec.volumes).toEqual([{ name: 'mpi-run-ssh-secret', secret: { secretName: 'mpi-run-ssh-secret', defaultMode: 420 } }]);
  });

  it('Multinode worker: sshd on 2222, liveness and startup removed, TCP readiness on 2222 (20/20/5/10)', () => {
    const container: Container = { name: 'main', args: ['python3', '--model', 'test'], ...structuredClone(probes) };
    applyTrtllmMultinode(container, {}, ctxOf({ role: 'worker', nodeCount: 3 }));
    expect(container.args).toEqual([
      `mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run /run/sshd && ls -la /ssh-pk/ && ${sshSetup} && ssh-keygen -t rsa -f $HOME/.ssh/host_keys/ssh_host_rsa_key -N '' && ssh-keygen -t ecdsa -f $HOME/.ssh/host_keys/ssh_host_ecdsa_key -N '' && ssh-keygen -t ed25519 -f $HOME/.ssh/host_keys/ssh_host_ed25519_key -N '' && printf 'Port 2222\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_rsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ecdsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ed25519_key\\nPidFile '$HOME'/.ssh/run/sshd.pid\\nStrictModes no\\nPermitRootLogin yes\\nPasswordAuthentication no\\nPubkeyAuthentication yes\\nAuthorizedKeysFile '$HOME'/.ssh/authorized_keys\\n' > $HOME/.ssh/sshd_config && /usr/sbin/sshd -D -f $HOME/.ssh/sshd_config`,
    ]);
    expect([container.livenessProbe, container.startupProbe]).toEqual([undefined, undefined]);
    expect(container.readinessProbe).toEqual({ tcpSocket: { port: 2222 }, initialDelaySeconds: 20, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 10 });
  });

  it('keeps JSON args intact through the bash -c wrapper (TestShellQuoteForBashC_InLeaderCommand)', () => {
    const json = '{"load_format": "DUMMY", "tensor_parallel_size": 8}';
    const container: Container = { name: 'main', command: ['python3', '-m', 'dynamo.trtllm'], args: ['--model-path', 'deepseek-ai/DeepSeek-R1', '--override-engine-args', json], resources: { requests: { 'nvidia.com/gpu': '4' } } };
    applyTrtllmMultinode(container, {}, ctxOf({ role: 'leader', component: { name: 'dec' } }));
    expect(container.args?.[0]).toContain(`--override-engine-args "{\\"load_format\\": \\"DUMMY\\", \\"tensor_parallel_size\\": 8}"`);
    expect(container.args?.[0]).toContain("bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm");
  });
});
