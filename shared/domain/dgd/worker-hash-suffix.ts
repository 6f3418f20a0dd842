/**
 * When a DGD's worker cliques carry the worker-generation hash (the label
 * `nvidia.com/dynamo-worker-hash` and the env `DYN_NAMESPACE_WORKER_SUFFIX`), as upstream decides
 * it for the Grove pathway (`shouldRenderGroveWorkerHashSuffix` in
 * `deploy/operator/internal/controller/dgd_grove_workload_renderer.go`, and its caller's
 * `workerGenerationChanged` from `planUnsupportedWorkerHashTransition` in
 * `dgd_worker_rollout_reconciler.go`; envtest `TestGroveWorkerHashSuffixForExistingDGD`).
 *
 * A PodCliqueSet written by an upstream operator from before rolling updates has no hash on its
 * worker cliques. Rendering the hash on the first pass here would change every worker pod
 * template and so roll every worker once, only for switching operators. Upstream keeps such a
 * PodCliqueSet unsuffixed until the next real worker-generation change, and so does this.
 * @module
 */
import { ANNOTATION_CURRENT_WORKER_HASH, ANNOTATION_CURRENT_WORKER_HASH_V2, LABEL_COMPONENT, LABEL_WORKER_HASH, LEGACY_WORKER_HASH_SENTINEL, type Dgd } from '../../api/index.js';
import { isWorkerClass, labelValue } from './pod-template.js';

/**
 * Whether this pass renders the worker hash on the worker cliques (upstream
 * `shouldRenderGroveWorkerHashSuffix`): never for a DGD without worker-class components;
 * always when no PodCliqueSet exists yet, or when every worker component's clique in the
 * existing one already carries a non-empty `nvidia.com/dynamo-worker-hash` label; otherwise (a
 * PodCliqueSet an older operator wrote without it) only once the worker generation changed.
 * In: the DGD (its non-LPX worker components), the existing PodCliqueSet as read (unparsed,
 * or undefined), and {@link isWorkerGenerationChanged}. Pure.
 */
export function shouldRenderWorkerHashSuffix(dgd: Pick<Dgd, 'spec'>, existing: Readonly<Record<string, unknown>> | undefined, workerGenerationChanged: boolean): boolean {
  if (!hasWorkerComponents(dgd)) return false;
  if (existing === undefined || podCliqueSetUsesWorkerHashSuffix(dgd, existing)) return true;
  return workerGenerationChanged;
}

/**
 * Whether every worker-class component has a clique (found by its `nvidia.com/dynamo-component`
 * label, the first such clique, as upstream `podCliqueSetCliqueForComponent`) whose clique
 * labels carry a non-empty worker hash (upstream `podCliqueSetUsesGroveWorkerHashSuffix`). Pure.
 */
export function podCliqueSetUsesWorkerHashSuffix(dgd: Pick<Dgd, 'spec'>, pcs: Readonly<Record<string, unknown>>): boolean {
  const cliques = readCliqueLabels(pcs);
  return workerComponentNames(dgd).every((name) => {
    const labels = cliques.find((l) => l[LABEL_COMPONENT] === labelValue(name));
    return labels !== undefined && (labels[LABEL_WORKER_HASH] ?? '') !== '';
  });
}

/**
 * Whether the worker generation changed since the one recorded on the DGD (upstream
 * `planUnsupportedWorkerHashTransition`: `workerGenerationChanged` is set only when the DGD
 * records a current worker hash and it differs from the desired one; a DGD recording none is
 * "initialized" to the desired hash without a change):
 * - `nvidia.com/current-worker-hash-v2` recorded: changed iff it differs from `rendered`;
 * - only the v1 `nvidia.com/current-worker-hash`: the `legacy` sentinel (pre-rolling-update
 *   workers that the rollout must replace) is a change; any other v1 value is not, since v2 is
 *   recorded beside it in the same pass without rolling the workers (reconcile-dgd.ts
 *   `decideWorkerHashCommit`, upstream `migrateCurrentWorkerHashIfNeeded`);
 * - neither: no change.
 * In: the DGD's metadata.annotations and the hash rendered from its spec. Pure.
 */
export function isWorkerGenerationChanged(dgd: Pick<Dgd, 'metadata'>, rendered: string): boolean {
  const v2 = dgd.metadata.annotations?.[ANNOTATION_CURRENT_WORKER_HASH_V2] ?? '';
  const v1 = dgd.metadata.annotations?.[ANNOTATION_CURRENT_WORKER_HASH] ?? '';
  if (v2 !== '') return v2 !== rendered;
  return v1 === LEGACY_WORKER_HASH_SENTINEL;
}

function hasWorkerComponents(dgd: Pick<Dgd, 'spec'>): boolean {
  return workerComponentNames(dgd).length > 0;
}

function workerComponentNames(dgd: Pick<Dgd, 'spec'>): string[] {
  return dgd.spec.components.filter((c) => c.type !== 'lpx' && isWorkerClass(c)).map((c) => c.name);
}

/** The clique-level labels of a PodCliqueSet as read, in clique order (missing labels as {}). */
function readCliqueLabels(pcs: Readonly<Record<string, unknown>>): Record<string, string>[] {
  const spec = pcs['spec'] as { template?: { cliques?: unknown } } | undefined;
  const cliques = spec?.template?.cliques;
  if (!Array.isArray(cliques)) return [];
  return cliques.map((clique: unknown) => {
    const labels = typeof clique === 'object' && clique !== null ? (clique as { labels?: unknown }).labels : undefined;
    return typeof labels === 'object' && labels !== null ? (labels as Record<string, string>) : {};
  });
}
