import { describe, expect, it } from 'vitest';
import { parseModelRegistryUrl, resolveBuildUrl } from './model-registry.js';

interface Row {
  readonly name: string;
  readonly registryURL?: string;
  readonly id?: string;
  readonly want?: string;
  readonly wantErrMessage?: string;
}

// The 16 rows of upstream's TestRegistryBuildURL (deploy/operator/internal/dynamo/lpx/model_registry_test.go),
// names, inputs and messages as upstream has them (upstream-notes/lpx.md §4).
const rows: readonly Row[] = [
  { name: 'direct gcs url', id: 'gs://bucket/model/build', want: 'gs://bucket/model/build' },
  { name: 'direct file url', id: 'file:///models/build', want: 'file:///models/build' },
  { name: 'relative id with gcs registry', registryURL: 'gs://bucket/registry', id: 'model/build', want: 'gs://bucket/registry/model/build' },
  { name: 'relative id with file registry', registryURL: 'file:///registry', id: 'model/build', want: 'file:///registry/model/build' },
  { name: 'absolute path', id: '/models/build', want: 'file:///models/build' },
  { name: 'gcs url with gcs registry', registryURL: 'gs://bucket/registry', id: 'gs://other-bucket/build', wantErrMessage: 'build ID "gs://other-bucket/build" must be relative when model registry URL is configured' },
  { name: 'file url with gcs registry', registryURL: 'gs://bucket/registry', id: 'file:///models/build', wantErrMessage: 'build ID "file:///models/build" must be relative when model registry URL is configured' },
  { name: 'absolute path with gcs registry', registryURL: 'gs://bucket/registry', id: '/models/build', wantErrMessage: 'build ID "/models/build" must be relative when model registry URL is configured' },
  { name: 'gcs url with file registry', registryURL: 'file:///registry', id: 'gs://bucket/build', wantErrMessage: 'build ID "gs://bucket/build" must be relative when model registry URL is configured' },
  { name: 'file url with file registry', registryURL: 'file:///registry', id: 'file:///models/build', wantErrMessage: 'build ID "file:///models/build" must be relative when model registry URL is configured' },
  { name: 'absolute path with file registry', registryURL: 'file:///registry', id: '/models/build', wantErrMessage: 'build ID "/models/build" must be relative when model registry URL is configured' },
  { name: 'absolute url within registry', registryURL: 'gs://bucket/registry', id: 'gs://bucket/registry/build', wantErrMessage: 'build ID "gs://bucket/registry/build" must be relative when model registry URL is configured' },
  { name: 'padded absolute path', registryURL: 'file:///registry', id: ' /models/build ', wantErrMessage: 'build ID " /models/build " must be relative when model registry URL is configured' },
  { name: 'relative id escaping registry', registryURL: 'gs://bucket/registry', id: '../model/build', wantErrMessage: 'build ID "../model/build" must remain within the configured model registry' },
  { name: 'relative id without registry', id: 'model/build', wantErrMessage: 'model registry URL is not configured' },
  { name: 'empty id', wantErrMessage: 'empty ref' },
];

describe('resolveBuildUrl: upstream TestRegistryBuildURL (an absolute buildId is refused when a registry is configured)', () => {
  it('has the 16 upstream rows', () => {
    expect(rows).toHaveLength(16);
  });

  it.each(rows)('$name', (row) => {
    const registry = parseModelRegistryUrl(row.registryURL);
    expect(registry.ok).toBe(true);
    if (!registry.ok) return;
    const got = resolveBuildUrl(registry.registry, row.id ?? '');
    expect(got).toEqual(row.wantErrMessage === undefined ? { ok: true, url: row.want } : { ok: false, error: row.wantErrMessage });
  });
});

describe('parseModelRegistryUrl (lpx.md §4 "Config lpx.modelRegistryURL")', () => {
  it.each([
    { name: 'https is refused at construction (upstream TestRegistryBuildURL)', raw: 'https://unsupported.invalid', want: { ok: false, error: 'unsupported model registry URL scheme "https"' } },
    { name: 'empty means no registry', raw: '', want: { ok: true, registry: undefined } },
    { name: 'an absolute path is a file registry', raw: '/registry/', want: { ok: true, registry: { scheme: 'file', host: '', path: '/registry', url: 'file:///registry' } } },
    { name: 'a relative value is refused', raw: 'registry', want: { ok: false, error: 'parse model registry URL: parse ref "registry": relative ref' } },
    { name: 'a file URL with a host is refused', raw: 'file://host/registry', want: { ok: false, error: 'parse model registry URL: unexpected file host' } },
    { name: 'a gs URL without a host is refused', raw: 'gs:///registry', want: { ok: false, error: 'parse model registry URL: missing host' } },
  ])('$name', ({ raw, want }) => {
    expect(parseModelRegistryUrl(raw)).toEqual(want);
  });
});
