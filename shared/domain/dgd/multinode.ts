/**
 * Multinode launch on Grove leader/worker cliques, per backend: SGLang, vLLM (Ray, `mp`, and
 * data parallel) and TensorRT-LLM (SSH + mpirun), plus the leader address and rank environment.
 *
 * Source (facts taken, code our own): upstream `deploy/operator/internal/dynamo/grove.go`
 * (`GroveMultinodeDeployer`: leader and worker host names, rank
 * `$((GROVE_PCLQ_POD_INDEX + 1))`), `backend_sglang.go` and `mutation/sglang/catalog.go`,
 * `backend_vllm.go` and `mutation/vllm/catalog.go`, `backend_trtllm.go` and
 * `mutation/trtllm/catalog.go`, `mutation/command_line.go` (`injectFlagsIntoContainerCommand`,
 * `ShellQuote`), `internal/consts/consts.go` (ports 29500, 6379, 2222); upstream docs
 * "Portable Topology Environment Variables" (DYNAMO_LEADER_ADDRESS, DYNAMO_RANK). Pure: every
 * function works on the container and pod spec it is given, which the caller owns.
 * @module
 */
import type { Component, Container, EnvVar } from '../../api/index.js';

export type MultinodeRole = 'leader' | 'worker';

/** SGLang's `--dist-init-addr` port and vLLM's `--master-port` (upstream `SglangPort`, `VLLMMpMasterPort`). */
export const SGLANG_DIST_INIT_PORT = '29500';
export const VLLM_MP_MASTER_PORT = '29500';
/** Ray head port on the vLLM leader (upstream `VLLMPort`). */
export const VLLM_RAY_PORT = '6379';
/** vLLM data-parallel RPC port (upstream `dataParallelRPCPort`). */
export const VLLM_DATA_PARALLEL_RPC_PORT = '13445';
/** sshd port of TensorRT-LLM workers (upstream `MpiRunSshPort`). */
export const MPI_RUN_SSH_PORT = 2222;
export const ENV_DYNAMO_LEADER_ADDRESS = 'DYNAMO_LEADER_ADDRESS';
export const ENV_DYNAMO_RANK = 'DYNAMO_RANK';

/** What a backend needs to know about the clique it renders. */
export interface MultinodeContext {
  readonly component: Component;
  readonly role: MultinodeRole;
  readonly nodeCount: number;
  /** Origin >= 1.6.0: commands use `$(DYNAMO_LEADER_ADDRESS)` and `$(DYNAMO_RANK)`. */
  readonly topologyAliases: boolean;
  /** vLLM executor: `mp` (multiprocessing) when true, Ray otherwise. */
  readonly vllmMultiprocessing: boolean;
  /** Secret with the TensorRT-LLM SSH key pair (operator config `mpi.sshSecretName`). */
  readonly mpiSshSecretName: string;
}

type Json = Record<string, unknown>;
type PodSpecLike = Json & { initContainers?: Container[]; volumes?: Json[] };

/**
 * The leader's DNS name inside its scaling-group replica:
 * `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-<lower(component)>-ldr-0.$(GROVE_HEADLESS_SERVICE)`.
 * Source: upstream `GroveMultinodeDeployer.GetLeaderHostname`. Pure.
 */
export function groveLeaderHostname(component: Pick<Component, 'name'>): string {
  return `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-${component.name.toLowerCase()}-ldr-0.$(GROVE_HEADLESS_SERVICE)`;
}

/** Every node's host name, leader first, then `<comp>-wkr-<i>` (upstream `GetHostNames`). Pure. */
export function groveHostnames(component: Pick<Component, 'name'>, nodeCount: number): string[] {
  const name = component.name.toLowerCase();
  const workers = Array.from({ length: Math.max(0, nodeCount - 1) }, (_v, i) => `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-${name}-wkr-${i}.$(GROVE_HEADLESS_SERVICE)`);
  return [groveLeaderHostname(component), ...workers];
}

/** A worker's node rank: `$((GROVE_PCLQ_POD_INDEX + 1))`, shell arithmetic (upstream `GetNodeRank`). */
export const GROVE_WORKER_RANK = '$((GROVE_PCLQ_POD_INDEX + 1))';

/**
 * The portable topology env of a multinode main container (origin >= 1.6.0):
 * DYNAMO_LEADER_ADDRESS (the leader host name, no port) and DYNAMO_RANK from the group-wide pod
 * index (`$(GROVE_PCSG_POD_INDEX)`: the leader is 0, workers 1..nodeCount-1 because the leader
 * clique is listed first). Operator-owned: they replace authored values of the same names.
 * Source: upstream docs "Portable Topology Environment Variables". Pure.
 */
export function multinodeTopologyEnv(component: Pick<Component, 'name'>): EnvVar[] {
  return [
    { name: ENV_DYNAMO_LEADER_ADDRESS, value: groveLeaderHostname(component) },
    { name: ENV_DYNAMO_RANK, value: '$(GROVE_PCSG_POD_INDEX)' },
  ];
}

/** The leader address and worker rank a launch command names. */
function topologyValues(ctx: MultinodeContext): { leader: string; workerRank: string; rankNeedsShell: boolean } {
  if (ctx.topologyAliases) return { leader: `$(${ENV_DYNAMO_LEADER_ADDRESS})`, workerRank: `$(${ENV_DYNAMO_RANK})`, rankNeedsShell: false };
  return { leader: groveLeaderHostname(ctx.component), workerRank: GROVE_WORKER_RANK, rankNeedsShell: true };
}

const PYTHON_COMMAND = /^(.*\/)?(python\d*(\.\d+)*)$/;

/** True for a Python interpreter command (`python`, `python3.11`, `/usr/bin/python3`). Upstream `IsPythonCommand`. */
export function isPythonCommand(command: string): boolean {
  return PYTHON_COMMAND.test(command);
}

/**
 * Quotes a word for `sh -c`: plain words pass unchanged; a word with spaces, quotes, `$`,
 * braces or similar is double-quoted with `\`, `"`, `$`, backtick and `'` escaped. Upstream
 * `ShellQuote`. Pure.
 */
export function shellQuote(value: string): string {
  if (!/[ \t\n'"\\{}[\]$`!]/.test(value)) return value;
  const escaped = value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '\\$').replace(/`/g, '\\`').replace(/'/g, `'"'"'`);
  return `"${escaped}"`;
}

/**
 * Adds launch flags to a container (upstream `injectFlagsIntoContainerCommand`):
 * - a Python command (`python3 -m dynamo.sglang ...`): appended to args, or, when a flag needs
 *   shell arithmetic, rewritten to `sh -c "exec <quoted command and args> <flags>"`;
 * - otherwise (`sh -c "python3 -m dynamo.sglang ..."`): inserted after the first Python
 *   command in an arg that names the framework, before any `|`, `&` or `;`.
 * Mutates `container`.
 */
export function injectFlags(container: Container, flags: string, needsShell: boolean, framework: string): void {
  const command = container.command ?? [];
  const args = container.args ?? [];
  if (command.length > 0 && isPythonCommand(command[0] ?? '')) {
    if (needsShell) {
      const line = [...command, ...args].map(shellQuote).join(' ');
      container.command = ['sh', '-c'];
      container.args = [`exec ${line} ${flags}`];
      return;
    }
    container.args = [...args, ...flags.split(/\s+/).filter((f) => f !== '')];
    return;
  }
  const pattern = new RegExp(`(python[0-9.]*\\s+[^|&;]*${framework}[^|&;]*?)(\\s|$|[|&;])`);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const modified = arg.replace(new RegExp(pattern.source, 'g'), (_m, python: string, separator: string) => `${python.trim()} ${flags}${separator}`);
    if (modified !== arg) {
      const next = [...args];
      next[i] = modified;
      container.args = next;
      return;
    }
  }
}

function removeProbes(container: Container, probes: readonly ('livenessProbe' | 'readinessProbe' | 'startupProbe')[]): void {
  for (const probe of probes) delete (container as Json)[probe];
}

/**
 * SGLang on a multinode clique: both roles get `--dist-init-addr <leader>:29500 --nnodes N
 * --node-rank R` (leader 0); worker probes are removed. Upstream `backend_sglang.go`,
 * `mutation/sglang/catalog.go`. Mutates `container`.
 */
export function applySglangMultinode(container: Container, ctx: MultinodeContext): void {
  const topology = topologyValues(ctx);
  if (ctx.role === 'worker') removeProbes(container, ['livenessProbe', 'readinessProbe', 'startupProbe']);
  const rank = ctx.role === 'leader' ? '0' : topology.workerRank;
  const needsShell = ctx.role === 'worker' && topology.rankNeedsShell;
  injectFlags(container, `--dist-init-addr ${topology.leader}:${SGLANG_DIST_INIT_PORT} --nnodes ${ctx.nodeCount} --node-rank ${rank}`, needsShell, 'sglang');
}

/** Tokens of a container's args, split on whitespace (upstream `getExpandedArgs`). */
function expandedArgs(container: Container): string[] {
  return (container.args ?? []).flatMap((a) => a.split(/\s+/).filter((t) => t !== ''));
}

/** The integer after `flag` in the args, else 1 (upstream `getFlagValue`). */
function flagValue(tokens: readonly string[], flag: string): number {
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (tokens[i] === flag && /^-?\d+$/.test(tokens[i + 1] ?? '')) return Number(tokens[i + 1]);
  }
  return 1;
}

/** GPUs of the main container: `limits["nvidia.com/gpu"]`, else requests; 0 when unset. */
export function containerGpus(container: Container): number {
  const resources = (container.resources ?? {}) as { limits?: Json; requests?: Json };
  const raw = resources.limits?.['nvidia.com/gpu'] ?? resources.requests?.['nvidia.com/gpu'];
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : 0;
  return value;
}

export type VllmLaunchMode = 'mp' | 'ray' | 'data-parallel' | 'none';

/**
 * Which vLLM multinode launch a container needs (upstream `updateVLLMMultinodeArgs`): TP x PP
 * above the container's GPUs -> `mp` or `ray` (per executor); TP x PP x DP above them ->
 * `data-parallel`; otherwise `none`. No GPU count -> `none`. Pure.
 */
export function vllmLaunchMode(container: Container, multiprocessing: boolean): VllmLaunchMode {
  const tokens = expandedArgs(container);
  const gpus = containerGpus(container);
  if (gpus === 0) return 'none';
  const world = flagValue(tokens, '--tensor-parallel-size') * flagValue(tokens, '--pipeline-parallel-size');
  if (world > gpus) return multiprocessing ? 'mp' : 'ray';
  if (world * flagValue(tokens, '--data-parallel-size') > gpus) return 'data-parallel';
  return 'none';
}

/**
 * vLLM on a multinode clique (upstream `backend_vllm.go`, `mutation/vllm/catalog.go`):
 * - `mp`: both roles `--distributed-executor-backend mp --nnodes N --master-addr <leader>
 *   --master-port 29500 --node-rank R`, workers also `--headless`; workers wait for the
 *   leader's master port in an init container `wait-for-leader-mp`;
 * - `ray`: the leader runs `ray start --head --port=6379 && <quoted command and args> --distributed-executor-backend ray`,
 *   workers `ray start --address=<leader>:6379 --block`, both through `/bin/sh -c`;
 * - `data-parallel`: `--data-parallel-hybrid-lb`, `--data-parallel-size` (unless authored),
 *   `--data-parallel-size-local`, `--data-parallel-start-rank` (worker: local x rank),
 *   `--data-parallel-address`, `--data-parallel-rpc-port 13445`;
 * - with `mp`, VLLM_NIXL_SIDE_CHANNEL_HOST from `status.podIP`; worker probes are removed.
 * The wait-for-leader container is added only for the `mp` launch (upstream declares it apart
 * from the flags; a data-parallel leader never opens the master port). Mutates both arguments.
 */
export function applyVllmMultinode(container: Container, podSpec: PodSpecLike, ctx: MultinodeContext): VllmLaunchMode {
  const mode = vllmLaunchMode(container, ctx.vllmMultiprocessing);
  const topology = topologyValues(ctx);
  const groveLeader = groveLeaderHostname(ctx.component);
  switch (mode) {
    case 'mp': {
      const base = `--distributed-executor-backend mp --nnodes ${ctx.nodeCount} --master-addr ${topology.leader} --master-port ${VLLM_MP_MASTER_PORT}`;
      if (ctx.role === 'leader') injectFlags(container, `${base} --node-rank 0`, false, 'vllm');
      else injectFlags(container, `${base} --node-rank ${topology.workerRank} --headless`, topology.rankNeedsShell, 'vllm');
      if (ctx.role === 'worker') podSpec.initContainers = [...(podSpec.initContainers ?? []), waitForLeaderContainer(groveLeader, container.image)];
      break;
    }
    case 'ray': {
      if (ctx.role === 'leader') {
        const line = [...(container.command ?? []), ...(container.args ?? [])].map(shellQuote).join(' ');
        container.args = [`ray start --head --port=${VLLM_RAY_PORT} && ${line} --distributed-executor-backend ray`];
      } else {
        container.args = [`ray start --address=${groveLeader}:${VLLM_RAY_PORT} --block`];
      }
      container.command = ['/bin/sh', '-c'];
      break;
    }
    case 'data-parallel': {
      const tokens = expandedArgs(container);
      const local = Math.floor(containerGpus(container) / (flagValue(tokens, '--tensor-parallel-size') * flagValue(tokens, '--pipeline-parallel-size')));
      let total = flagValue(tokens, '--data-parallel-size');
      if (total === 1) total = local * ctx.nodeCount;
      const startRank = ctx.role === 'leader' ? '0' : `$(( ${local} * ${topology.workerRank} ))`;
      const flags = ['--data-parallel-hybrid-lb'];
      if (!tokens.includes('--data-parallel-size')) flags.push('--data-parallel-size', String(total));
      flags.push('--data-parallel-size-local', String(local), '--data-parallel-start-rank', startRank, '--data-parallel-address', topology.leader, '--data-parallel-rpc-port', VLLM_DATA_PARALLEL_RPC_PORT);
      injectFlags(container, flags.join(' '), ctx.role === 'worker', 'vllm');
      break;
    }
    case 'none':
      break;
    default: {
      const never: never = mode;
      return never;
    }
  }
  if (ctx.vllmMultiprocessing) container.env = [...(container.env ?? []), { name: 'VLLM_NIXL_SIDE_CHANNEL_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }];
  if (ctx.role === 'worker') removeProbes(container, ['livenessProbe', 'readinessProbe', 'startupProbe']);
  return mode;
}

/** The worker init container that waits for the leader's master port (upstream `UpdatePodSpec`, vLLM mp). */
function waitForLeaderContainer(leader: string, image: string | undefined): Container {
  const script = [
    'import socket, time',
    `host, port = "${leader}", ${VLLM_MP_MASTER_PORT}`,
    'print(f"Waiting for leader master port at {host}:{port}...", flush=True)',
    'start = time.monotonic()',
    'last_status = start',
    'last_err = ""',
    'while True:',
    '    try:',
    '        s = socket.create_connection((host, port), timeout=2)',
    '        s.close()',
    '        elapsed = time.monotonic() - start',
    '        print(f"Leader master port ready (waited {elapsed:.1f}s)", flush=True)',
    '        break',
    '    except Exception as e:',
    '        last_err = f"{type(e).__name__}: {e}"',
    '    now = time.monotonic()',
    '    if now - last_status >= 30:',
    '        print(f"Still waiting for {host}:{port}... ({now - start:.0f}s elapsed, last error: {last_err})", flush=True)',
    '        last_status = now',
    '    time.sleep(2)',
    '',
  ].join('\n');
  return { name: 'wait-for-leader-mp', ...(image === undefined ? {} : { image }), command: ['python3', '-c', script] };
}

/** Env names every TensorRT-LLM mpirun exports (upstream `getCommonTRTLLMEnvVars`). */
const TRTLLM_COMMON_ENV = [
  'CUDA_VISIBLE_DEVICES', 'MODEL_PATH', 'HF_TOKEN', 'HUGGING_FACE_HUB_TOKEN', 'HF_ENDPOINT', 'TOKENIZERS_PARALLELISM', 'NCCL_DEBUG', 'NCCL_IB_DISABLE',
  'NCCL_P2P_DISABLE', 'TENSORRT_LLM_CACHE_DIR', 'HF_HOME', 'TRANSFORMERS_CACHE', 'HF_DATASETS_CACHE', 'PATH', 'LD_LIBRARY_PATH', 'PYTHONPATH', 'HOME', 'USER',
  'TRTLLM_USE_UCX_KVCACHE',
] as const;

const SSH_KEY_SETUP = [
  'cp /ssh-pk/private.key $HOME/.ssh/id_rsa',
  'cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub',
  'cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys',
  'chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys',
  'chmod 644 $HOME/.ssh/id_rsa.pub',
  `printf 'Host *\\nIdentityFile '$HOME'/.ssh/id_rsa\\nStrictHostKeyChecking no\\nPort ${MPI_RUN_SSH_PORT}\\n' > $HOME/.ssh/config`,
];

/** The leader's `sh -c` line: SSH setup, then mpirun over every node (upstream `setupLeaderContainer`). Pure. */
export function trtllmLeaderCommand(container: Container, ctx: Pick<MultinodeContext, 'component' | 'nodeCount'>): string {
  const command = container.command ?? [];
  const args = container.args ?? [];
  let original = '';
  if (command.length > 0 && isPythonCommand(command[0] ?? '')) original = [...command, ...args].map(shellQuote).join(' ');
  else if (args.length > 0) original = args.join(' ');
  else if (command.length > 0) original = command.join(' ');
  const totalGpus = ctx.nodeCount * trtllmGpusPerNode(container);
  const envNames = [...new Set([...TRTLLM_COMMON_ENV, ...(container.env ?? []).map((e) => e.name)])].sort();
  const envFlags = envNames.map((n) => `-x ${n}`).join(' ');
  const mpirun = `mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe -n ${totalGpus} -H ${groveHostnames(ctx.component, ctx.nodeCount).join(',')} --mca pml ob1 --mca plm_rsh_args "-p ${MPI_RUN_SSH_PORT} -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa" ${envFlags} bash -c 'trtllm-llmapi-launch ${original}'`;
  return ['mkdir -p $HOME/.ssh', 'ls -la /ssh-pk/', ...SSH_KEY_SETUP, mpirun].join(' && ');
}

/** A worker's `sh -c` line: SSH keys, host keys, sshd on 2222 in the foreground (upstream `setupWorkerContainer`). */
export function trtllmWorkerCommand(): string {
  return [
    'mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run /run/sshd',
    'ls -la /ssh-pk/',
    ...SSH_KEY_SETUP,
    "ssh-keygen -t rsa -f $HOME/.ssh/host_keys/ssh_host_rsa_key -N ''",
    "ssh-keygen -t ecdsa -f $HOME/.ssh/host_keys/ssh_host_ecdsa_key -N ''",
    "ssh-keygen -t ed25519 -f $HOME/.ssh/host_keys/ssh_host_ed25519_key -N ''",
    `printf 'Port ${MPI_RUN_SSH_PORT}\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_rsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ecdsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ed25519_key\\nPidFile '$HOME'/.ssh/run/sshd.pid\\nStrictModes no\\nPermitRootLogin yes\\nPasswordAuthentication no\\nPubkeyAuthentication yes\\nAuthorizedKeysFile '$HOME'/.ssh/authorized_keys\\n' > $HOME/.ssh/sshd_config`,
    '/usr/sbin/sshd -D -f $HOME/.ssh/sshd_config',
  ].join(' && ');
}

/** GPUs per node for mpirun: requests, else limits, of `nvidia.com/gpu` (upstream `getGPUsPerNode`). */
function trtllmGpusPerNode(container: Container): number {
  const resources = (container.resources ?? {}) as { limits?: Json; requests?: Json };
  for (const raw of [resources.requests?.['nvidia.com/gpu'], resources.limits?.['nvidia.com/gpu']]) {
    if (typeof raw === 'number') return raw;
    if (typeof raw === 'string' && /^\d+$/.test(raw)) return Number(raw);
  }
  return 0;
}

/**
 * TensorRT-LLM on a multinode clique (upstream `backend_trtllm.go`, `mutation/trtllm/catalog.go`):
 * the SSH key Secret mounted read-only at `/ssh-pk` (volume mode 0644), env
 * `OMPI_MCA_orte_keep_fqdn_hostnames=1`; the leader runs mpirun over every node, keeping its
 * probes; workers run sshd, lose liveness and startup probes and get a TCP readiness probe on
 * 2222 (initialDelay 20, period 20, timeout 5, failureThreshold 10). Mutates both arguments.
 */
export function applyTrtllmMultinode(container: Container, podSpec: PodSpecLike, ctx: MultinodeContext): void {
  if (ctx.role === 'worker') {
    removeProbes(container, ['livenessProbe', 'startupProbe']);
    (container as Json)['readinessProbe'] = { tcpSocket: { port: MPI_RUN_SSH_PORT }, initialDelaySeconds: 20, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 10 };
  }
  (container as Json)['volumeMounts'] = [...(((container as Json)['volumeMounts'] as Json[] | undefined) ?? []), { name: ctx.mpiSshSecretName, mountPath: '/ssh-pk', readOnly: true }];
  container.env = [...(container.env ?? []), { name: 'OMPI_MCA_orte_keep_fqdn_hostnames', value: '1' }];
  const line = ctx.role === 'leader' ? trtllmLeaderCommand(container, ctx) : trtllmWorkerCommand();
  container.command = ['/bin/sh', '-c'];
  container.args = [line];
  podSpec.volumes = [...(podSpec.volumes ?? []), { name: ctx.mpiSshSecretName, secret: { secretName: ctx.mpiSshSecretName, defaultMode: 0o644 } }];
}
