/**
 * The `lpx.enabled` start-up check of the reconcile function: with LPX enabled, the
 * `scheduling.lpu.nvidia.com/v1alpha1` LpuPipelineRequest and `scheduler.grove.io/v1alpha1`
 * PodGang APIs must be served, and `LPX_MODEL_REGISTRY_URL` must parse; otherwise the process
 * stops before it reports ready, with upstream's message.
 * Source: ../shared/upstream-notes/lpx.md §5.4 (feature gate `features.LPX`: startup verifies the
 * APIs, "LPX is explicitly enabled in config but the ... API was not detected in the cluster"),
 * §7 (config doc), §4 (registry URL rules).
 * @module
 */
import { LPR_API_VERSION, LPR_KIND, LPX_MISSING_LPR_API_MESSAGE, LPX_MISSING_PODGANG_API_MESSAGE, PODGANG_API_VERSION, PODGANG_KIND } from '../../shared/api/index.js';
import { parseModelRegistryUrl } from '../../shared/domain/index.js';
import { ConfigError, PermanentError } from '../../shared/runtime/index.js';
import type { ReconcileDeps } from './dgd.js';

/** A namespace every cluster has, so the probe lists (almost) nothing. */
const PROBE_NAMESPACE = 'kube-system';

async function isServed(deps: ReconcileDeps, apiVersion: string, kind: string): Promise<boolean> {
  try {
    await deps.kube.list(apiVersion, kind, PROBE_NAMESPACE);
    return true;
  } catch (error) {
    if (error instanceof PermanentError && error.reason === 'UnknownKind') return false;
    throw error;
  }
}

/**
 * checkLpxStartup: nothing while `lpx.enabled=false`. Enabled: ConfigError naming
 * LPX_MODEL_REGISTRY_URL for a bad registry URL; PermanentError (reason `LPXAPIMissing`) with
 * upstream's message when an API is not served. Other API errors propagate (the host stops).
 */
export async function checkLpxStartup(deps: ReconcileDeps): Promise<void> {
  if (!deps.config.lpxEnabled) return;
  const registry = parseModelRegistryUrl(deps.config.lpxModelRegistryUrl);
  if (!registry.ok) throw new ConfigError([{ key: 'LPX_MODEL_REGISTRY_URL', expected: `an absolute path, a file:// or a gs:// URL (${registry.error})`, received: deps.config.lpxModelRegistryUrl }]);
  if (!(await isServed(deps, LPR_API_VERSION, LPR_KIND))) throw new PermanentError(LPX_MISSING_LPR_API_MESSAGE, { reason: 'LPXAPIMissing' });
  if (!(await isServed(deps, PODGANG_API_VERSION, PODGANG_KIND))) throw new PermanentError(LPX_MISSING_PODGANG_API_MESSAGE, { reason: 'LPXAPIMissing' });
}
