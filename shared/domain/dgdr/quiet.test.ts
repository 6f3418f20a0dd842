/**
 * A quiet DGDR pass (issue 17 item 3: "A pass that finds nothing to change writes nothing: no
 * apply, no status write, no Event"; "The same for profile's DGDR and Run passes"): the
 * decision's status is dropped when it equals the stored one, and each phase reads only what its
 * decision reads.
 */
import { describe, expect, it } from 'vitest';
import { DgdrSchema, type Condition, type Dgdr, type DgdrStatus } from '../../api/index.js';
import { decideDgdr, type DgdrDesired, type DgdrObserved } from './lifecycle.js';
import { dgdrReadsOf, withoutUnchangedStatus, type DgdrReads } from './quiet.js';

type Obj = Record<string, unknown>;

const NOW = new Date('2026-12-01T09:00:00Z');
const LATER = new Date('2026-12-01T10:00:00Z');
const EARLIER = '2026-12-01T08:00:00Z';
const CONFIG = { operatorImage: undefined, standardEnv: [] };
const HARDWARE = { gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 16, rdma: false } as const;

function aDgdr(status: Obj, spec: Obj = {}): Dgdr {
  return DgdrSchema.parse({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'qwen', namespace: 'ns', uid: 'uid-1', generation: 1 },
    spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'vllm', autoApply: true, hardware: HARDWARE, ...spec },
    status,
  });
}

function observed(dgdr: Dgdr, fields: Partial<DgdrObserved> = {}): DgdrObserved {
  return { dgdr, job: undefined, jobPods: [], outputData: undefined, output: undefined, dgd: undefined, dgdPodContainers: [], configMaps: [], nodes: undefined, modelCachePvcExists: undefined, ...fields };
}

const cond = (type: string, status: 'True' | 'False', reason: string, message: string, observedGeneration: number | null = 1, lastTransitionTime = EARLIER): Condition => ({ type, status, reason, message, lastTransitionTime, ...(observedGeneration === null ? {} : { observedGeneration }) });
const runningJob = { name: 'profile-qwen', uid: 'job-uid', labels: { app: 'dynamo-profiler', dgdr: 'qwen' }, ownerReferences: [{ uid: 'uid-1', controller: true }], conditions: [] };
const dgdIn = (state: string, availableReplicas: number) => ({ name: 'qwen-dgd', uid: 'dgd-uid', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns' }, ownerReferences: [], state, components: [{ replicas: 2, availableReplicas }] });

/** Decides, applies the status it wrote, and decides again at a later time: the second pass of an unchanged world. */
function settled(world: (dgdr: Dgdr) => DgdrObserved, status: Obj): { readonly dgdr: Dgdr; readonly again: DgdrDesired } {
  const first = decideDgdr(world(aDgdr(status)), CONFIG, NOW);
  const dgdr = aDgdr((first.status ?? status) as Obj);
  return { dgdr, again: decideDgdr(world(dgdr), CONFIG, LATER) };
}

const QUIET = { hardware: undefined, deleteStaleOutput: undefined, job: undefined, annotations: undefined, configMaps: [], dgd: undefined, deleteConfigMaps: [], adoptConfigMaps: [], status: undefined, events: [] };

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: { readonly world: (dgdr: Dgdr) => DgdrObserved; readonly status: Obj };
}

const quietRows: readonly Row[] = [
  {
    name: 'Profiling while the Job runs: nothing to write on the next pass',
    reason: 'decideProfiling rebuilds the same status each pass; only lastTransitionTime could move, and it does not when the status holds',
    input: { world: (dgdr) => observed(dgdr, { job: runningJob }), status: { phase: 'Profiling', profilingPhase: 'Initializing', profilingJobName: 'profile-qwen', observedGeneration: 1, conditions: [cond('Profiling', 'False', 'Initializing', 'Discovering GPU hardware and preparing profiling job')] } },
  },
  {
    name: 'Deploying while the DGD is not ready (no pod waits on an image): nothing to write on the next pass',
    reason: 'decideDeploying rebuilds the same status while the DGD state and replicas hold',
    input: { world: (dgdr) => observed(dgdr, { dgd: dgdIn('pending', 1) }), status: { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1, conditions: [] } },
  },
  {
    name: 'Deployed and healthy: nothing to write on the next pass',
    reason: 'dgdr-reference "Lifecycle": Deployed follows the DGD; an unchanged DGD changes nothing',
    input: { world: (dgdr) => observed(dgdr, { dgd: dgdIn('successful', 2) }), status: { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1, conditions: [] } },
  },
  {
    name: 'Failed: nothing to write on the next pass',
    reason: 'Failed is terminal (upstream-notes/dgdr.md §1.2 step 9)',
    input: { world: (dgdr) => observed(dgdr), status: { phase: 'Failed', observedGeneration: 1, conditions: [cond('Profiling', 'False', 'ProfilingFailed', 'profiling failed: boom')] } },
  },
];

describe('withoutUnchangedStatus over decideDgdr', () => {
  it.each(quietRows)('$name', ({ input }) => {
    const { dgdr, again } = settled(input.world, input.status);
    expect(withoutUnchangedStatus(again, dgdr.status)).toEqual(QUIET);
  });

  it('a changed field (a DGD replica became available) is written: the whole status the function owns, the rest of the decision as it was', () => {
    const { dgdr } = settled((d) => observed(d, { dgd: dgdIn('pending', 1) }), { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1, conditions: [] });
    const decided = decideDgdr(observed(dgdr, { dgd: dgdIn('pending', 2) }), CONFIG, LATER);
    const written = withoutUnchangedStatus(decided, dgdr.status);
    expect(written).toEqual(decided);
    expect(written.status).toEqual({ ...dgdr.status, deploymentInfo: { replicas: 2, availableReplicas: 2 } });
  });

  it('a changed condition (the Job started running) is written', () => {
    const dgdr = aDgdr({ phase: 'Profiling', profilingPhase: 'Initializing', profilingJobName: 'profile-qwen', observedGeneration: 1, conditions: [cond('Profiling', 'False', 'Initializing', 'Discovering GPU hardware and preparing profiling job')] });
    const decided = decideDgdr(observed(dgdr, { job: runningJob }), CONFIG, NOW);
    expect(withoutUnchangedStatus(decided, dgdr.status).status?.conditions?.find((c) => c.type === 'Profiling')).toMatchObject({ reason: 'ProfilingRunning', message: 'Profiling is in progress' });
  });

  it('Events and other writes of an unchanged status are kept (an image pull failure is reported each pass, as upstream does)', () => {
    const world = (d: Dgdr) => observed(d, { dgd: dgdIn('pending', 1), dgdPodContainers: [{ pod: 'p', container: 'c', reason: 'ImagePullBackOff', message: '' }] });
    const { dgdr, again } = settled(world, { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1, conditions: [] });
    expect(withoutUnchangedStatus(again, dgdr.status)).toEqual({ ...again, status: undefined });
    expect(again.events).toEqual([{ type: 'Warning', reason: 'ImagePullFailed', action: 'Get', note: 'pod p container c: ImagePullBackOff' }]);
  });
});

describe('dgdrReadsOf (what each phase\'s decision reads)', () => {
  const failedBy = (reason: string): DgdrStatus => ({ phase: 'Failed', conditions: [{ type: 'DeploymentReady', status: 'False', reason, message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }] });
  const rows: readonly { readonly name: string; readonly reason: string; readonly input: DgdrStatus | undefined; readonly want: DgdrReads }[] = [
    { name: 'no status (Pending) reads the Job and the output', reason: 'upstream-notes/dgdr.md §1.1: "" or absent is Pending', input: undefined, want: { job: true, jobPods: false, output: true, dgd: false } },
    { name: 'Pending reads the Job and the output', reason: 'decidePending: a Job observed enters Profiling; one not controlled is a conflict; issue 20: a stale output it controls is deleted, a foreign one refused', input: { phase: 'Pending' }, want: { job: true, jobPods: false, output: true, dgd: false } },
    { name: 'Profiling reads the Job, its pods and the output', reason: 'decideProfiling: sub-phase from the output, failure details from the pods', input: { phase: 'Profiling' }, want: { job: true, jobPods: true, output: true, dgd: false } },
    { name: 'Ready reads the DGD', reason: 'decideReady follows a DGD created by hand (dgdr-reference "status.deploymentInfo ... Populated once a DGD has been created (via autoApply or manually)")', input: { phase: 'Ready' }, want: { job: false, jobPods: false, output: false, dgd: true } },
    { name: 'Deploying reads the DGD and the ConfigMaps', reason: 'decideDeploying: the DGD state, configMapsToAdopt', input: { phase: 'Deploying' }, want: { job: false, jobPods: false, output: false, dgd: true } },
    { name: 'Deployed reads the DGD and the ConfigMaps', reason: 'decideDeployed: the DGD state, configMapsToAdopt', input: { phase: 'Deployed' }, want: { job: false, jobPods: false, output: false, dgd: true } },
    { name: 'Failed reads nothing more', reason: 'decideFailed re-derives Succeeded from the request only', input: { phase: 'Failed' }, want: { job: false, jobPods: false, output: false, dgd: false } },
    { name: 'Failed DeploymentNameConflict reads nothing more', reason: 'its own planner ConfigMaps stay (the dgd-planted integration test)', input: failedBy('DeploymentNameConflict'), want: { job: false, jobPods: false, output: false, dgd: false } },
    { name: 'Failed PlannerConfigMapConflict reads the DGD and the ConfigMaps', reason: 'issue 20 "nothing is half-written": the planner ConfigMaps it created go while no DGD of that name can mount them', input: failedBy('PlannerConfigMapConflict'), want: { job: false, jobPods: false, output: false, dgd: true } },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    expect(dgdrReadsOf(input)).toEqual(want);
  });
});
