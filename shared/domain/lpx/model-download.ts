/**
 * LPX model downloads: which `gs://` builds must be downloaded through Model Express before an
 * LPX workload is rendered, and what the LPXGD's `status.modelDownload` and `Ready` say about them.
 *
 * Source: ../shared/upstream-notes/lpx.md §5.1 (collection, budget and reuse, results, periodic
 * refresh), §4 `EnsureDownloaded`; upstream `internal/controller/lpx/modeldownload.go`
 * (`reconcileModelDownloads`, `ensureModelsDownloaded`, `collectBuilds`).
 * @module
 */
import { CONDITION_READY, LpxConfigSchema, type Dgd, type LpxGraphDeployment } from '../../api/index.js';
import { resolveBuildUrl, type BuildRef } from './model-registry.js';

/** A full check is renewed after this long (upstream `modelDownloadRefreshInterval`, 24 h). */
export const MODEL_DOWNLOAD_REFRESH_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** One shared budget for all checks of a reconcile, split evenly (upstream `modelDownloadCheckTimeout`, 30 s). */
export const MODEL_DOWNLOAD_CHECK_TIMEOUT_MS = 30_000;
/** Ready=Pending while builds download (lpx.md §5.1: "Waiting for model downloads to complete: <comma list>"). */
export const MESSAGE_MODEL_DOWNLOADS_PENDING = 'Waiting for model downloads to complete';

/** The `status.modelDownload` of an LPXGD: the downloaded remote build URLs (sorted) and when all were last checked. */
export type ModelDownloadStatus = NonNullable<NonNullable<LpxGraphDeployment['status']>['modelDownload']>;

/**
 * lpxRemoteBuildUrls (upstream `collectBuilds`): every LPX component's build URL that needs a
 * download, the `gs://` ones, deduplicated and sorted. Unresolvable ids are left to the
 * decision's "resolve LPX build URL" failure.
 * In: dgd.spec.components, the registry. Source: lpx.md §5.1 Collection. Pure.
 */
export function lpxRemoteBuildUrls(dgd: Pick<Dgd, 'spec'>, registry: BuildRef | undefined): string[] {
  const urls = new Set<string>();
  for (const component of dgd.spec.components.filter((c) => c.type === 'lpx')) {
    const url = resolveBuildUrl(registry, LpxConfigSchema.safeParse(component.lpx ?? {}).data?.buildId ?? '');
    if (url.ok && url.url.startsWith('gs://')) urls.add(url.url);
  }
  return [...urls].sort();
}

/** Which builds this reconcile checks with Model Express, and which it reuses. */
export interface ModelDownloadPlan {
  readonly builds: readonly string[];
  /** Builds in a fresh (< 24 h) `status.modelDownload.builds`: reused without a check. */
  readonly reused: readonly string[];
  readonly toCheck: readonly string[];
  /** A Ready child at its generation with a recorded check: a failed refresh is ignored. */
  readonly isRefresh: boolean;
  /** Each check's share of the 30 s budget, in milliseconds. */
  readonly perBuildTimeoutMs: number;
}

/**
 * planModelDownloads (upstream `reconcileModelDownloads` / `ensureModelsDownloaded`): builds
 * listed in a `status.modelDownload` checked less than 24 h ago are reused; the others are
 * checked, each with an even share of the 30 s budget (30 s / number of builds). A Ready child
 * whose generation is observed and that has a recorded check is refreshing.
 * In: the builds ({@link lpxRemoteBuildUrls}), the LPXGD (status, generation), now. Pure.
 */
export function planModelDownloads(builds: readonly string[], lpxgd: Pick<LpxGraphDeployment, 'metadata' | 'status'>, now: Date): ModelDownloadPlan {
  const previous = lpxgd.status?.modelDownload;
  const lastCheckedAt = previous?.lastCheckedAt === undefined ? undefined : Date.parse(previous.lastCheckedAt);
  const isFresh = lastCheckedAt !== undefined && now.getTime() - lastCheckedAt < MODEL_DOWNLOAD_REFRESH_INTERVAL_MS;
  const existing = new Set(isFresh ? (previous?.builds ?? []) : []);
  const isReady = (lpxgd.status?.conditions ?? []).some((c) => c.type === CONDITION_READY && c.status === 'True');
  return {
    builds,
    reused: builds.filter((b) => existing.has(b)),
    toCheck: builds.filter((b) => !existing.has(b)),
    isRefresh: previous !== undefined && isReady && lpxgd.status?.observedGeneration === lpxgd.metadata.generation && lastCheckedAt !== undefined,
    perBuildTimeoutMs: builds.length === 0 ? MODEL_DOWNLOAD_CHECK_TIMEOUT_MS : Math.floor(MODEL_DOWNLOAD_CHECK_TIMEOUT_MS / builds.length),
  };
}

/** One build's check: downloaded or still downloading, or the Model Express failure text. */
export type DownloadCheck = { readonly ok: true; readonly isDownloaded: boolean } | { readonly ok: false; readonly error: string };

export type ModelDownloadVerdict =
  /** Every build is downloaded (or there are none): go on, with this status (undefined: none). */
  | { readonly kind: 'ready'; readonly modelDownload: ModelDownloadStatus | undefined }
  /** A refresh of a Ready child did not complete: keep the previous status and go on (upstream logs "Unable to refresh model downloads"). */
  | { readonly kind: 'refreshIncomplete'; readonly modelDownload: ModelDownloadStatus | undefined; readonly errors: readonly string[] }
  | { readonly kind: 'pending'; readonly modelDownload: ModelDownloadStatus; readonly message: string }
  | { readonly kind: 'failed'; readonly modelDownload: ModelDownloadStatus; readonly message: string };

/**
 * decideModelDownloads: the outcome of the checks.
 * - no remote builds: ready, `modelDownload` absent;
 * - all downloaded: ready, `{builds, lastCheckedAt}`, lastCheckedAt renewed only when every build
 *   was checked (no fresh reuse);
 * - otherwise, while refreshing a Ready child: keep the previous status and go on;
 * - otherwise `{builds: the downloaded ones}` and, on a check error, Failed with the errors
 *   ("ensure model %q is downloaded: <cause>", one a line, as Go's errors.Join), else Pending
 *   "Waiting for model downloads to complete: <the builds still downloading, comma-separated>".
 * In: the plan, the checks by build URL (a missing check counts as not downloaded), the previous
 * status, now. Source: lpx.md §5.1 Results and Periodic refresh; upstream modeldownload.go. Pure.
 */
export function decideModelDownloads(plan: ModelDownloadPlan, checks: ReadonlyMap<string, DownloadCheck>, previous: ModelDownloadStatus | undefined, now: Date): ModelDownloadVerdict {
  if (plan.builds.length === 0) return { kind: 'ready', modelDownload: undefined };
  const downloaded: string[] = [];
  const errors: string[] = [];
  const waiting: string[] = [];
  for (const build of plan.builds) {
    if (plan.reused.includes(build)) {
      downloaded.push(build);
      continue;
    }
    const check = checks.get(build) ?? { ok: true, isDownloaded: false };
    if (!check.ok) errors.push(`ensure model ${JSON.stringify(build)} is downloaded: ${check.error}`);
    else if (check.isDownloaded) downloaded.push(build);
    else waiting.push(build);
  }
  if (errors.length === 0 && waiting.length === 0) {
    const lastCheckedAt = plan.reused.length === 0 ? now.toISOString().replace(/\.\d{3}Z$/, 'Z') : previous?.lastCheckedAt;
    return { kind: 'ready', modelDownload: { builds: downloaded, ...(lastCheckedAt === undefined ? {} : { lastCheckedAt }) } };
  }
  if (plan.isRefresh) return { kind: 'refreshIncomplete', modelDownload: previous, errors };
  if (errors.length > 0) return { kind: 'failed', modelDownload: { builds: downloaded }, message: errors.join('\n') };
  return { kind: 'pending', modelDownload: { builds: downloaded }, message: `${MESSAGE_MODEL_DOWNLOADS_PENDING}: ${waiting.join(', ')}` };
}
