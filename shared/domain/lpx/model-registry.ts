/**
 * The LPX model registry: `lpx.modelRegistryURL` and the build URL of a component's
 * `lpx.buildId`.
 *
 * Source: ../shared/upstream-notes/lpx.md §4 (upstream `internal/dynamo/lpx/model_registry.go`
 * @709ef36d, `parseBuildRef` and `BuildURL`; the rejection of absolute ids with a configured
 * registry from ../shared/reference/lpx-integration-review.txt, round 1).
 * @module
 */
import path from 'node:path/posix';

/** A parsed build reference: a `file://` URL with an absolute path, or a URL with a host. */
export interface BuildRef {
  readonly scheme: string;
  readonly host: string;
  /** The URL path; absolute and cleaned for `file`. */
  readonly path: string;
  /** The reference written back as a URL (`file:///models/build`, `gs://bucket/x`). */
  readonly url: string;
}

export type BuildRefResult = { readonly ok: true; readonly ref: BuildRef } | { readonly ok: false; readonly error: string; readonly isRelative: boolean };

export type BuildUrlResult = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly error: string };

/** The registry schemes upstream supports (lpx.md §4: "file" or "gs"). */
const REGISTRY_SCHEMES = ['file', 'gs'] as const;
const SCHEME_PATTERN = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/**
 * parseBuildRef: an absolute filesystem path becomes `file://<clean path>`; otherwise the value
 * must be a URL with a scheme (no scheme: relative). `file://` URLs have no host and an absolute
 * path; other schemes need a host.
 * In: a raw reference (trimmed first). Out: {@link BuildRefResult}; `isRelative` marks a value
 * without a scheme (BuildURL joins those to the registry).
 * Errors (upstream texts): "empty ref", "relative ref", "unexpected file host",
 * "file path must be absolute", "missing host".
 * Source: lpx.md §4 `parseBuildRef`. Pure.
 */
export function parseBuildRef(raw: string): BuildRefResult {
  const value = raw.trim();
  if (value === '') return { ok: false, error: 'empty ref', isRelative: false };
  if (value.startsWith('/')) {
    const cleaned = cleanPath(value);
    return { ok: true, ref: { scheme: 'file', host: '', path: cleaned, url: `file://${cleaned}` } };
  }
  const scheme = SCHEME_PATTERN.exec(value)?.[1];
  if (scheme === undefined) return { ok: false, error: `parse ref ${JSON.stringify(value)}: relative ref`, isRelative: true };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, error: `parse ref ${JSON.stringify(value)}: invalid URL`, isRelative: false };
  }
  const lower = scheme.toLowerCase();
  if (lower === 'file') {
    if (url.host !== '') return { ok: false, error: 'unexpected file host', isRelative: false };
    const filePath = decodeURIComponent(url.pathname);
    if (!filePath.startsWith('/')) return { ok: false, error: 'file path must be absolute', isRelative: false };
    const cleaned = cleanPath(filePath);
    return { ok: true, ref: { scheme: 'file', host: '', path: cleaned, url: `file://${cleaned}` } };
  }
  if (url.host === '') return { ok: false, error: 'missing host', isRelative: false };
  return { ok: true, ref: { scheme: lower, host: url.host, path: url.pathname, url: value } };
}

/**
 * parseModelRegistryUrl: `lpx.modelRegistryURL` as configured. Empty or absent means no
 * registry (then only absolute build ids work).
 * Out: the registry reference, `undefined` for none, or an error: the {@link parseBuildRef}
 * error, or "unsupported model registry URL scheme %q" for a scheme other than file or gs.
 * Source: lpx.md §4 "Config lpx.modelRegistryURL"; §7 (file and gs URLs). Pure.
 */
export function parseModelRegistryUrl(raw: string | undefined): { readonly ok: true; readonly registry: BuildRef | undefined } | { readonly ok: false; readonly error: string } {
  if (raw === undefined || raw.trim() === '') return { ok: true, registry: undefined };
  const parsed = parseBuildRef(raw);
  if (!parsed.ok) return { ok: false, error: `parse model registry URL: ${parsed.error}` };
  if (!(REGISTRY_SCHEMES as readonly string[]).includes(parsed.ref.scheme)) {
    return { ok: false, error: `unsupported model registry URL scheme ${JSON.stringify(parsed.ref.scheme)}` };
  }
  return { ok: true, registry: parsed.ref };
}

/**
 * resolveBuildUrl (upstream `BuildURL`): the URL of a compiled model build.
 * 1. An absolute id (a path or a URL): refused with a registry configured, "build ID %q must be
 *    relative when model registry URL is configured" (the raw id, spaces included); else returned
 *    as a URL.
 * 2. A relative id without a registry: "model registry URL is not configured".
 * 3. The trimmed id must stay local (no `..`, not absolute): "build ID %q must remain within the
 *    configured model registry"; cleaned, an empty or "." id is "empty ref".
 * 4. `file://` + clean(join(registry path, id)), or the gs registry URL joined with the id.
 * Source: lpx.md §4 `BuildURL`, `TestRegistryBuildURL`. Pure.
 */
export function resolveBuildUrl(registry: BuildRef | undefined, buildId: string): BuildUrlResult {
  const parsed = parseBuildRef(buildId);
  if (parsed.ok) {
    if (registry !== undefined) return { ok: false, error: `build ID ${JSON.stringify(buildId)} must be relative when model registry URL is configured` };
    return { ok: true, url: parsed.ref.url };
  }
  if (!parsed.isRelative) return { ok: false, error: parsed.error };
  if (registry === undefined) return { ok: false, error: 'model registry URL is not configured' };
  const id = buildId.trim();
  if (!isLocalPath(id)) return { ok: false, error: `build ID ${JSON.stringify(buildId)} must remain within the configured model registry` };
  const cleaned = path.normalize(id).replace(/\/+$/, '');
  if (cleaned === '' || cleaned === '.') return { ok: false, error: 'empty ref' };
  if (registry.scheme === 'file') return { ok: true, url: `file://${path.join(registry.path, cleaned)}` };
  const base = registry.url.replace(/\/+$/, '');
  return { ok: true, url: `${base}/${cleaned}` };
}

/** Go's `filepath.Clean` for slash paths: normalised, no trailing slash except the root. */
function cleanPath(value: string): string {
  const normalized = path.normalize(value);
  return normalized.length > 1 ? normalized.replace(/\/+$/, '') : normalized;
}

/** Go's `filepath.IsLocal` for slash paths: not absolute, not empty, never climbing above its root. */
function isLocalPath(id: string): boolean {
  if (id === '' || id.startsWith('/')) return false;
  const cleaned = path.normalize(id);
  return cleaned !== '..' && !cleaned.startsWith('../');
}
