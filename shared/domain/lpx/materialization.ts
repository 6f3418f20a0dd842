/**
 * The checks upstream makes once an LPX workload is resolved and before anything is published:
 * the engine replica bound, the hostnames Grove will give the LPX pods, and the pod model
 * annotation the LPX scheduler accepts. Each is a named rule with upstream's message; the
 * LPXGraphDeployment reports the first failure as `Ready=False`, reason `Failed`, naming the
 * field (`spec.components[i]...: Invalid value: ...: <upstream's message>`).
 *
 * Source: upstream `internal/dynamo/lpx/materialization.go` @274172b2 (`maxWorkloadReplicas =
 * 2496`, `ValidateReplicaCount`, `validatePodHostname`: the longest name, at the last
 * scaling-group replica and the last pod index, must be a DNS-1123 label), the scheduler API
 * `internal/dynamo/lpx/scheduler/v1alpha1/types.go` (`MaxModelAnnotationBytes = 261054`,
 * `ValidateModelAnnotation`); ../shared/upstream-notes/lpx.md §1.1 `replicas` ("Up to 2496 for
 * hybrid and LPU-only engines; pod hostname limits may lower that"), §3.1 (pod annotations:
 * "`…/model`: ≤ 261054 UTF-8 bytes, no boundary whitespace"); upstream-notes/grove.md §A.8
 * (a clique in a scaling group is `<pcs>-0-<group>-<replica>-<clique>`, its pods' hostnames
 * `<clique>-<index>`). Every function here is pure.
 * @module
 */
import { LPX_ROLE_AGENT, LPX_ROLE_CONDUCTOR, MAX_LPX_REPLICAS, formatIssue, type Component, type Dgd } from '../../api/index.js';
import { dns1123LabelProblems } from '../dgd/names.js';
import { scalingGroupCliqueName } from './render-pcs.js';
import type { LpxWorkload } from './workloads.js';

/** Most UTF-8 bytes of the `scheduling.lpu.nvidia.com/model` pod annotation (upstream `MaxModelAnnotationBytes`). */
export const MAX_LPX_MODEL_ANNOTATION_BYTES = 261_054;

/**
 * validateLpxReplicaCount (upstream `ValidateReplicaCount`): a workload's engine replicas, the
 * scaling group's size, are 0..2496: "LPX replica count must be between 0 and 2496". Out: the
 * message, or undefined. Pure.
 */
export function validateLpxReplicaCount(replicas: number): string | undefined {
  return replicas < 0 || replicas > MAX_LPX_REPLICAS ? `LPX replica count must be between 0 and ${MAX_LPX_REPLICAS}` : undefined;
}

/**
 * validateMaterializedPodHostname (upstream `validatePodHostname`): the hostname Grove gives pod
 * `podIndex` of a clique, `<clique>-<podIndex>`, must be a DNS-1123 label: "materialized %s Pod
 * hostname %q is invalid: %s" with apimachinery's problems joined by "; ". In: the role as
 * upstream names it (`Agent`, `conductor`), the clique's object name, the pod index. Pure.
 */
export function validateMaterializedPodHostname(role: 'Agent' | 'conductor', cliqueName: string, podIndex: number): string | undefined {
  const hostname = `${cliqueName}-${podIndex}`;
  const problems = dns1123LabelProblems(hostname);
  return problems.length === 0 ? undefined : `materialized ${role} Pod hostname ${JSON.stringify(hostname)} is invalid: ${problems.join('; ')}`;
}

/** Unicode White_Space characters upstream refuses at either end (`isAnnotationBoundaryWhitespace`). */
function isAnnotationBoundaryWhitespace(codePoint: number): boolean {
  return (
    (codePoint >= 0x09 && codePoint <= 0x0d) ||
    codePoint === 0x20 ||
    codePoint === 0x85 ||
    codePoint === 0xa0 ||
    codePoint === 0x1680 ||
    (codePoint >= 0x2000 && codePoint <= 0x200a) ||
    codePoint === 0x2028 ||
    codePoint === 0x2029 ||
    codePoint === 0x202f ||
    codePoint === 0x205f ||
    codePoint === 0x3000
  );
}

/**
 * validateModelAnnotation (upstream scheduler API `ValidateModelAnnotation`): the value of the
 * `scheduling.lpu.nvidia.com/model` pod annotation: not empty ("model annotation must not be
 * empty"), at most 261054 UTF-8 bytes ("model annotation contains %d UTF-8 bytes; at most %d are
 * supported"), no whitespace at either end ("model annotation %q has noncanonical boundary
 * whitespace"). (A JavaScript string is always valid UTF-16, so upstream's "is not valid UTF-8"
 * has no counterpart here.) Pure.
 */
export function validateModelAnnotation(value: string): string | undefined {
  if (value === '') return 'model annotation must not be empty';
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_LPX_MODEL_ANNOTATION_BYTES) return `model annotation contains ${bytes} UTF-8 bytes; at most ${MAX_LPX_MODEL_ANNOTATION_BYTES} are supported`;
  const first = value.codePointAt(0) ?? 0;
  const last = [...value].at(-1)?.codePointAt(0) ?? 0;
  if (isAnnotationBoundaryWhitespace(first) || isAnnotationBoundaryWhitespace(last)) return `model annotation ${JSON.stringify(value)} has noncanonical boundary whitespace`;
  return undefined;
}

function componentIndex(dgd: Pick<Dgd, 'spec'>, component: Pick<Component, 'name'>): number {
  return dgd.spec.components.findIndex((c) => c.name === component.name);
}

function roleIndex(component: Pick<Component, 'roles'>, role: string): number {
  return (component.roles ?? []).findIndex((r) => r.name === role);
}

/**
 * validateLpxMaterialization (upstream `PlanNodeLocalMaterialization` -> `ValidateReplicaCount`,
 * and the scheduler's `ValidateModelAnnotation` on what the pods will carry): for each workload,
 * in order,
 * 1. its engine replicas (explicit, else 1 as upstream's `ptr.Deref(replicas, 1)`) within 0..2496,
 *    at `spec.components[i].replicas` of the serving component;
 * 2. the conductor pod's hostname at the last scaling-group replica, pod 0 (an LPU-only conductor
 *    only: upstream does not check the hybrid's Cyborg template), at
 *    `spec.components[i].roles[j]` of the conductor role;
 * 3. per model, the last Agent pod's hostname at the last replica (models whose partitions all
 *    run on the Cyborg GPU have no Agent pod and are skipped), at the owning component's agent
 *    role; and the model annotation, at the owning component.
 * With our names (the LPX PodCliqueSet at most 31 characters, scaling groups `lpx`/`lpx<i>`,
 * cliques `agt`, `agt<n>`, `cond`, `lpx<i>-agt`, `lpx<i>-cond`, models `default`, `draft<n>`,
 * `target`) rules 2 and 3 hold for every admitted graph; they guard the names all the same.
 * In: dgd.spec.components (for field paths), the LPX PodCliqueSet name, the derived workloads.
 * Out: the first error as `path: Invalid value: value: message`, or undefined. Pure.
 */
export function validateLpxMaterialization(dgd: Pick<Dgd, 'spec'>, pcsName: string, workloads: readonly LpxWorkload[]): string | undefined {
  for (const workload of workloads) {
    const at = `spec.components[${componentIndex(dgd, workload.serving)}]`;
    const replicas = workload.explicitReplicas ?? 1;
    const bound = validateLpxReplicaCount(replicas);
    if (bound !== undefined) return formatIssue({ path: `${at}.replicas`, type: 'Invalid', value: replicas, detail: bound });
    const lastReplica = Math.max(0, replicas - 1);
    const isHybrid = workload.models.some((m) => m.derived?.pipeline === 'hybrid');
    if (workload.conductorClique !== undefined && !isHybrid) {
      const hostname = validateMaterializedPodHostname('conductor', scalingGroupCliqueName(pcsName, workload.scalingGroup, lastReplica, workload.conductorClique), 0);
      if (hostname !== undefined) return formatIssue({ path: `${at}.roles[${roleIndex(workload.serving, LPX_ROLE_CONDUCTOR)}]`, type: 'Invalid', detail: hostname });
    }
    for (const model of workload.models) {
      const owner = `spec.components[${componentIndex(dgd, model.component)}]`;
      if (model.agentReplicas > 0) {
        const hostname = validateMaterializedPodHostname('Agent', scalingGroupCliqueName(pcsName, workload.scalingGroup, lastReplica, model.agentClique), model.agentReplicas - 1);
        if (hostname !== undefined) return formatIssue({ path: `${owner}.roles[${roleIndex(model.component, LPX_ROLE_AGENT)}]`, type: 'Invalid', detail: hostname });
      }
      const annotation = validateModelAnnotation(model.model);
      if (annotation !== undefined) return formatIssue({ path: owner, type: 'Invalid', value: model.model, detail: annotation });
    }
  }
  return undefined;
}
