/**
 * The Candidate publisher of a v1beta2 Run: once the Run's Job completed, turns AISimulate's
 * recommendations into DynamoGraphDeploymentCandidates and reports `Published` on the Run.
 *
 * Reads: the Run's output ConfigMap (`<run>-aisimulate-output`, key `recommendation.json`, written
 * by the Job's output step, shared/domain/v1beta2/run-output.ts; only when the Run controls it);
 * the Run's existing Candidates.
 * Decides: `selectCandidates`, `renderCandidateDgd`, `decideCandidateContent`, `decideValid`
 * (shared/domain, pure).
 * Writes, per Candidate in search order: create (never over an existing object), a strict
 * server-side dry-run create of its DGD (`dryRun=All`, `fieldValidation=Strict`; the response is
 * discarded), its status (parameters, metrics, rank, Valid); then the Run's `Published`
 * condition, `candidateRefs` and `progress.candidates.published`. Field manager
 * `dynamo-profile-publisher` (the Run logic owns `Completed`).
 * A dry-run answered 400 or 422 is the DGD's fault (Valid=False ValidationFailed). Every other
 * failure while preparing Candidates blocks publication: the dry-run's other answers (HTTP 403
 * included: RBAC and policy can be repaired), the output ConfigMap unreadable, the Candidate
 * list, create or status write refused, 429, 5xx. Each gives `Published=False`
 * `PublicationBlocked` with the error, the already published references and progress kept, and a
 * Transient outcome so the broker retries. Source: reference "v1beta2 DGD Overrides"
 * ("Retryable Candidate preparation errors are visible on the Run as Published=False, reason
 * PublicationBlocked, with the error in the condition's message"), "Candidate status".
 * @module
 */
import {
  CANDIDATE_KIND,
  CONDITION_PUBLISHED,
  CONDITION_VALID,
  DGDR_V1BETA2,
  LABEL_DGDR_RUN_UID,
  REASON_PUBLICATION_BLOCKED,
  REASON_PUBLICATION_SUCCEEDED,
  RUN_KIND,
  type CandidateRef,
  type Condition,
  type Run,
} from '../../shared/api/index.js';
import {
  candidateName,
  candidateParameters,
  controllerUidOf,
  decideCandidateContent,
  decideValid,
  dryRunDgd,
  nextCondition,
  readRunOutput,
  renderCandidate,
  runOutputConfigMapName,
  renderCandidateDgd,
  selectCandidates,
  type DryRunResult,
} from '../../shared/domain/index.js';
import { kubeStatusOf, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { TransientError, type HandlerDeps } from '../../shared/runtime/index.js';

export interface PublisherDeps extends HandlerDeps {
  /** The publisher's own client (field manager `dynamo-profile-publisher`). */
  readonly publisherKube: Kube;
}

/** The error text a blocked dry-run reports (the reference's example: "DGD dry-run forbidden: exceeded namespace quota"). */
function blockedMessage(error: unknown): string {
  const status = kubeStatusOf(error);
  if (status?.code === 403) return `DGD dry-run forbidden: ${status.message}`;
  if (status !== undefined) return `DGD dry-run failed: HTTP ${status.code}: ${status.message}`;
  return `DGD dry-run failed: ${error instanceof Error ? error.message : String(error)}`;
}

class PublicationBlocked extends Error {
  override readonly name = 'PublicationBlocked';
}

/** The error of a failed preparation step, as the Run's condition shows it: `<what>: HTTP <code>: <message>`, or the error's message. */
function stepMessage(what: string, error: unknown): string {
  const status = kubeStatusOf(error);
  if (status !== undefined) return `${what}: HTTP ${status.code}: ${status.message}`;
  return `${what}: ${error instanceof Error ? error.message : String(error)}`;
}

/** Runs one preparation step; any failure becomes PublicationBlocked naming the step (a dry-run's own PublicationBlocked passes through). */
async function prepare<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof PublicationBlocked) throw error;
    throw new PublicationBlocked(stepMessage(what, error), { cause: error });
  }
}

/** Runs the strict dry-run: Accepted, Rejected (400/422), or throws PublicationBlocked. */
async function dryRun(kube: Kube, dgd: Record<string, unknown>): Promise<DryRunResult> {
  try {
    await kube.create(dgd as unknown as Parameters<Kube['create']>[0], { dryRun: true });
    return { kind: 'Accepted' };
  } catch (error) {
    const status = kubeStatusOf(error);
    if (status !== undefined && (status.code === 400 || status.code === 422)) return { kind: 'Rejected', message: status.message };
    throw new PublicationBlocked(blockedMessage(error), { cause: error });
  }
}

async function writeRunPublication(deps: PublisherDeps, run: Run, refs: readonly CandidateRef[], condition: Omit<Condition, 'lastTransitionTime'>): Promise<void> {
  await deps.publisherKube.applyStatus(
    {
      apiVersion: DGDR_V1BETA2,
      kind: RUN_KIND,
      metadata: { name: run.metadata.name ?? '', namespace: run.metadata.namespace ?? '' },
      status: { candidateRefs: refs, progress: { candidates: { published: refs.length } }, conditions: [nextCondition(run.status?.conditions, condition, deps.now())] },
    },
    { force: true },
  );
}

/**
 * Publishes the Run's Candidates. Out: true when publication succeeded (Published=True was
 * written), false when the results are not there yet. Failures: TransientError after writing
 * PublicationBlocked (any failure while preparing); the kube client's error when the Run's own status write fails.
 */
export async function publishCandidates(deps: PublisherDeps, run: Run): Promise<boolean> {
  const namespace = run.metadata.namespace ?? '';
  const runName = run.metadata.name ?? '';
  const uid = run.metadata.uid ?? '';
  const configMapName = runOutputConfigMapName(runName);
  const refs: CandidateRef[] = [];
  try {
    const configMap = await prepare(`cannot read ConfigMap ${namespace}/${configMapName}`, () => deps.publisherKube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: configMapName }));
    const output = readRunOutput(configMap, uid);
    if (output.kind === 'NotOurs') deps.log.warn({ kind: 'ConfigMap', namespace, name: configMapName }, 'Ignored ConfigMap not controlled by the DynamoGraphDeploymentRun');
    if (output.kind !== 'Found') return false;
    let recommendation: unknown;
    try {
      recommendation = JSON.parse(output.recommendationJson) as unknown;
    } catch {
      recommendation = undefined;
    }
    const selected = selectCandidates(recommendation, run.spec);
    const stored = await prepare(`cannot list the ${CANDIDATE_KIND}s of ${RUN_KIND} ${namespace}/${runName}`, () => deps.publisherKube.list(DGDR_V1BETA2, CANDIDATE_KIND, namespace, { labelSelector: `${LABEL_DGDR_RUN_UID}=${uid}` }));
    const existing = new Map(stored.map((c) => [c.metadata.name, c]));
    for (const [index, candidate] of selected.entries()) {
      const generated = renderCandidateDgd(candidate, run.spec, deps.config.aisimulateImage);
      if (generated === undefined) {
        deps.log.warn({ candidateId: candidate.candidateId, deploymentMode: candidate.config['deployment_mode'] }, 'Skipped candidate with no DGD renderer');
        continue;
      }
      const name = candidateName(runName, candidate.candidateId);
      const content = decideCandidateContent(uid, candidate.candidateId, generated, run.spec.overrides?.dgd);
      let object: KubeObject | undefined = existing.get(name);
      if (object === undefined) object = await prepare(`cannot create ${CANDIDATE_KIND} ${namespace}/${name}`, () => deps.publisherKube.create(renderCandidate({ name: runName, namespace, uid }, candidate.candidateId, content) as unknown as Parameters<Kube['create']>[0]));
      // Own what you read (issue 20 item 1): a Candidate of this name that the Run does not control
      // (created by someone else, with or without the Run's label) is never validated, written or
      // published; its spec would be published as the Run's. Blocked, naming it, until it is removed.
      if (object === undefined || controllerUidOf(object) !== uid) {
        throw new PublicationBlocked(`${CANDIDATE_KIND} ${namespace}/${name} already exists and is not controlled by ${RUN_KIND} ${namespace}/${runName}; it is left untouched`);
      }
      const previous = (object?.['status'] as { conditions?: Condition[] } | undefined)?.conditions;
      const hasValid = previous?.some((c) => c.type === CONDITION_VALID) === true;
      if (!hasValid) {
        const verdict = decideValid(content.override, content.override.kind === 'Applied' ? await dryRun(deps.publisherKube, dryRunDgd(name, namespace, content)) : undefined);
        if (verdict !== undefined) {
          await prepare(`cannot write the status of ${CANDIDATE_KIND} ${namespace}/${name}`, () =>
            deps.publisherKube.applyStatus(
              {
                apiVersion: DGDR_V1BETA2,
                kind: CANDIDATE_KIND,
                metadata: { name, namespace },
                status: { parameters: candidateParameters(candidate), metrics: candidate.metrics, rank: index + 1, conditions: [nextCondition(previous, { type: CONDITION_VALID, ...verdict }, deps.now())] },
              },
              { force: true },
            ),
          );
        }
      }
      refs.push({ name, candidateId: candidate.candidateId });
    }
  } catch (error) {
    if (!(error instanceof PublicationBlocked)) throw error;
    // "preserves the already published Candidate references and progress": a pass blocked
    // before it reached them (an unreadable ConfigMap) must not shrink them.
    const published = run.status?.candidateRefs ?? [];
    await writeRunPublication(deps, run, refs.length >= published.length ? refs : published, { type: CONDITION_PUBLISHED, status: 'False', reason: REASON_PUBLICATION_BLOCKED, message: error.message, ...(run.metadata.generation === undefined ? {} : { observedGeneration: run.metadata.generation }) });
    deps.log.warn({ err: error }, 'Publication of Candidates blocked');
    throw new TransientError(`cannot publish Candidates of ${RUN_KIND} ${namespace}/${runName}: ${error.message}`, { cause: error });
  }
  await writeRunPublication(deps, run, refs, { type: CONDITION_PUBLISHED, status: 'True', reason: REASON_PUBLICATION_SUCCEEDED, message: `published ${refs.length} Candidates`, ...(run.metadata.generation === undefined ? {} : { observedGeneration: run.metadata.generation }) });
  return true;
}
