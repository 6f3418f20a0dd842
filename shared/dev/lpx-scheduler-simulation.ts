/**
 * A simulation of the LPX scheduler for `dynamo-fn dev` (the scheduler cannot run here: no LPUs).
 * The real scheduler answers each LpuPipelineRequest with a receipt: `status.phase` and
 * `status.observedGeneration` at the request's current generation (../shared/reference/
 * lpx-integration-review.txt; shared/domain/lpx/pipeline-requests.ts `receiptVerdict`). The
 * simulation answers `bound` to every request, except those of a DGD annotated
 * `dynamo-fn.dev/simulated-lpx-scheduler: hold` (a dev-only annotation only this simulation
 * reads), which it never answers, so their scheduling deadline can pass and cleanup be seen.
 * @module
 */
import { DGD_KIND, DGD_V1BETA1, LABEL_GRAPH_DEPLOYMENT_NAME, LPR_API_VERSION, LPR_KIND } from '../api/index.js';
import type { Kube, KubeObject } from '../kube/index.js';
import { startSimulationLoop } from './grove-simulation.js';

/** The field manager the simulation writes with, as the LPX scheduler would. */
export const LPX_SCHEDULER_SIMULATION_FIELD_MANAGER = 'lpx-scheduler';

/** The DGD annotation that makes the simulated scheduler leave the DGD's requests unanswered. */
export const HOLD_ANNOTATION = 'dynamo-fn.dev/simulated-lpx-scheduler';

/**
 * The receipt the simulated scheduler writes for `request`, or undefined when it writes none:
 * already answered at this generation, being deleted, or its DGD is held. Pure.
 */
export function simulatedReceipt(request: KubeObject, held: boolean): { readonly phase: 'bound'; readonly observedGeneration: number } | undefined {
  if (held || request.metadata['deletionTimestamp'] !== undefined) return undefined;
  const generation = request.metadata.generation ?? 1;
  const status = request['status'] as { phase?: unknown; observedGeneration?: unknown } | undefined;
  if (status?.phase === 'bound' && status.observedGeneration === generation) return undefined;
  return { phase: 'bound', observedGeneration: generation };
}

/** Whether `dgd` asks the simulated scheduler to hold its requests. Pure. */
export function isHeld(dgd: KubeObject | undefined): boolean {
  return (dgd?.metadata.annotations as Record<string, string> | undefined)?.[HOLD_ANNOTATION] === 'hold';
}

/** One pass over every LpuPipelineRequest. Out: how many receipts it wrote. */
export async function lpxSchedulerSimulationPass(kube: Kube): Promise<number> {
  let writes = 0;
  for (const request of await kube.list(LPR_API_VERSION, LPR_KIND)) {
    const namespace = request.metadata.namespace ?? 'default';
    const dgdName = (request.metadata.labels as Record<string, string> | undefined)?.[LABEL_GRAPH_DEPLOYMENT_NAME];
    const dgd = dgdName === undefined ? undefined : await kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: dgdName });
    const receipt = simulatedReceipt(request, isHeld(dgd));
    if (receipt === undefined) continue;
    await kube.applyStatus({ apiVersion: LPR_API_VERSION, kind: LPR_KIND, metadata: { name: request.metadata.name, namespace }, status: receipt }, { force: true });
    writes += 1;
  }
  return writes;
}

/** Runs {@link lpxSchedulerSimulationPass} every `intervalMs` until closed; a failed pass is reported and retried. */
export function startLpxSchedulerSimulation(kube: Kube, options: { readonly intervalMs?: number; readonly onError?: (error: unknown) => void } = {}): { close(): Promise<void> } {
  return startSimulationLoop(() => lpxSchedulerSimulationPass(kube), options);
}
