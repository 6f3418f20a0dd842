import { describe, expect, it } from 'vitest';
import type { LpxGraphDeployment } from '../../api/index.js';
import { decideModelDownloads, planModelDownloads, type DownloadCheck, type ModelDownloadStatus } from './model-download.js';

const NOW = new Date('2026-12-01T10:00:00Z');
const HOUR = 60 * 60 * 1000;
const A = 'gs://bucket/registry/a';
const B = 'gs://bucket/registry/b';
const at = (ms: number) => new Date(NOW.getTime() - ms).toISOString();

function anLpxgd(status: LpxGraphDeployment['status'], generation = 2): Pick<LpxGraphDeployment, 'metadata' | 'status'> {
  return { metadata: { name: 'llama', generation }, status };
}
const ready = { type: 'Ready', status: 'True' as const, reason: 'Ready', message: '', lastTransitionTime: at(HOUR) };

describe('planModelDownloads (lpx.md §5.1 "Budget and reuse"; upstream reconcileModelDownloads)', () => {
  it.each([
    { name: 'no status: every build is checked, each with an even share of the 30 s budget', lpxgd: anLpxgd(undefined), want: { reused: [], toCheck: [A, B], isRefresh: false, perBuildTimeoutMs: 15_000 } },
    { name: '"Builds already in a fresh status.modelDownload.builds are reused without re-checking"', lpxgd: anLpxgd({ modelDownload: { builds: [A], lastCheckedAt: at(23 * HOUR) } }), want: { reused: [A], toCheck: [B], isRefresh: false, perBuildTimeoutMs: 15_000 } },
    { name: '"Fresh means < 24 h old": a day-old check reuses nothing', lpxgd: anLpxgd({ modelDownload: { builds: [A, B], lastCheckedAt: at(24 * HOUR) } }), want: { reused: [], toCheck: [A, B], isRefresh: false, perBuildTimeoutMs: 15_000 } },
    { name: '"A Ready child whose generation is observed re-checks after 24 h": a refresh', lpxgd: anLpxgd({ observedGeneration: 2, conditions: [ready], modelDownload: { builds: [A, B], lastCheckedAt: at(25 * HOUR) } }), want: { reused: [], toCheck: [A, B], isRefresh: true, perBuildTimeoutMs: 15_000 } },
    { name: 'a Ready child at an older generation is not refreshing', lpxgd: anLpxgd({ observedGeneration: 1, conditions: [ready], modelDownload: { builds: [A, B], lastCheckedAt: at(25 * HOUR) } }), want: { reused: [], toCheck: [A, B], isRefresh: false, perBuildTimeoutMs: 15_000 } },
  ])('$name', ({ lpxgd, want }) => {
    expect(planModelDownloads([A, B], lpxgd, NOW)).toEqual({ builds: [A, B], ...want });
  });
});

describe('decideModelDownloads (lpx.md §5.1 "Results", "Periodic refresh")', () => {
  const fresh = (checks: Record<string, DownloadCheck>, lpxgd = anLpxgd(undefined)) => {
    const plan = planModelDownloads([A, B], lpxgd, NOW);
    return decideModelDownloads(plan, new Map(Object.entries(checks)), lpxgd.status?.modelDownload as ModelDownloadStatus | undefined, NOW);
  };
  const downloaded: DownloadCheck = { ok: true, isDownloaded: true };
  const downloading: DownloadCheck = { ok: true, isDownloaded: false };
  const failed: DownloadCheck = { ok: false, error: 'model express download failed for "gs://bucket/registry/b": bucket not found' };

  it.each([
    { name: '"No remote builds: modelDownload = nil"', got: () => decideModelDownloads(planModelDownloads([], anLpxgd(undefined), NOW), new Map(), undefined, NOW), want: { kind: 'ready', modelDownload: undefined } },
    { name: '"All done: modelDownload = {builds, lastCheckedAt}"', got: () => fresh({ [A]: downloaded, [B]: downloaded }), want: { kind: 'ready', modelDownload: { builds: [A, B], lastCheckedAt: '2026-12-01T10:00:00Z' } } },
    { name: '"lastCheckedAt is renewed only when a full check happened (no fresh reuse)"', got: () => fresh({ [B]: downloaded }, anLpxgd({ modelDownload: { builds: [A], lastCheckedAt: at(HOUR) } })), want: { kind: 'ready', modelDownload: { builds: [A, B], lastCheckedAt: at(HOUR) } } },
    { name: '"Pending downloads: status.modelDownload = {builds: downloaded}; Ready Pending Waiting for model downloads to complete: <comma list>"', got: () => fresh({ [A]: downloaded, [B]: downloading }), want: { kind: 'pending', modelDownload: { builds: [A] }, message: 'Waiting for model downloads to complete: gs://bucket/registry/b' } },
    { name: '"Errors propagate; the status is persisted first" (upstream: "ensure model %q is downloaded: %w")', got: () => fresh({ [A]: downloaded, [B]: failed }), want: { kind: 'failed', modelDownload: { builds: [A] }, message: 'ensure model "gs://bucket/registry/b" is downloaded: model express download failed for "gs://bucket/registry/b": bucket not found' } },
    {
      name: '"A failed or incomplete refresh is logged and ignored; the workload keeps running"',
      got: () => fresh({ [A]: downloaded, [B]: failed }, anLpxgd({ observedGeneration: 2, conditions: [ready], modelDownload: { builds: [A, B], lastCheckedAt: at(25 * HOUR) } })),
      want: { kind: 'refreshIncomplete', modelDownload: { builds: [A, B], lastCheckedAt: at(25 * HOUR) }, errors: ['ensure model "gs://bucket/registry/b" is downloaded: model express download failed for "gs://bucket/registry/b": bucket not found'] },
    },
  ])('$name', ({ got, want }) => {
    expect(got()).toEqual(want);
  });
});
