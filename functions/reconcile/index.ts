/**
 * The reconcile function: DynamoGraphDeployment -> Grove PodCliqueSet, Services and status;
 * DynamoGraphDeploymentScalingAdapter -> DGD component replicas (./dgdsa.ts).
 * Deployed as a Knative Service that scales to zero (infra/chart/templates/reconcile/); run locally with
 * `dynamo-fn serve reconcile`.
 * @module
 */
import { hostname } from 'node:os';
import { FIELD_MANAGER_RECONCILE } from '../../shared/api/index.js';
import { DEFAULT_RENDER_CONFIG, createQuietPassRecords } from '../../shared/domain/index.js';
import { createKube, loadKubeConnection, type Kube } from '../../shared/kube/index.js';
import { ConfigError, parseRenderSettings, type FunctionDefinition, type HandlerDeps, type RenderSettings } from '../../shared/runtime/index.js';
import { childRoutes, route as dgdRoute, type ReconcileDeps } from './dgd.js';
import { route as dgdsaRoute, withScalingAdapters } from './dgdsa.js';
import { lpuPipelineRequestRoute, lpxConfigMapRoute, lpxGraphDeploymentRoute } from './lpx.js';
import { checkLpxStartup } from './lpx-startup.js';
import { withQuietPasses } from './quiet.js';
import { resyncDeps } from './resync.js';

/**
 * The function's dependencies around a given client (the real one, or replay's in-memory one):
 * the render config is the renderer's defaults, `lpx.enabled` from the host's configuration,
 * and the render settings from the environment (`parseRenderSettings`: OPERATOR_VERSION,
 * GROVE_TERMINATION_DELAY, DISCOVERY_BACKEND, GANG_SCHEDULER, MPI_SSH_SECRET_NAME).
 */
export function depsWithKube(base: HandlerDeps, kube: Kube, settings: RenderSettings = {}): ReconcileDeps {
  return {
    ...base,
    kube,
    render: { ...DEFAULT_RENDER_CONFIG, ...settings, lpxEnabled: base.config.lpxEnabled },
    instance: process.env['K_REVISION'] ?? hostname(),
  };
}

/**
 * Builds the function's dependencies from the host's: a kube client from KUBECONFIG, else the
 * in-cluster service account.
 * With `lpx.enabled` and `MODEL_EXPRESS_URL`, also the Model Express client of `gs://` builds.
 * Failures: ConfigError naming each bad render setting (`parseRenderSettings`); ConfigError
 * naming KUBECONFIG when it is unset and the process is not in a pod (no
 * KUBERNETES_SERVICE_HOST), so the host stops before it reports ready; ConfigError naming
 * MODEL_EXPRESS_URL for a URL upstream refuses; the kube client's own error when the kubeconfig
 * file cannot be read. The deps carry this process's quiet-DGD records (./quiet.ts), empty at start.
 */
export async function init(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): Promise<ReconcileDeps> {
  const settings = parseRenderSettings(env);
  const kubeConfig = await loadKubeConnection(base.config.kubeconfigPath, env);
  if (kubeConfig === undefined) {
    throw new ConfigError([{ key: 'KUBECONFIG', expected: 'a kubeconfig file path when not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)', received: undefined }]);
  }
  // The process's quiet-DGD records (./quiet.ts): held for the life of this instance only.
  const deps = { ...depsWithKube(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_RECONCILE, now: base.now }), settings), quietPasses: createQuietPassRecords() };
  await checkLpxStartup(deps);
  const modelExpressUrl = base.config.lpxEnabled ? base.config.modelExpressUrl : undefined;
  if (modelExpressUrl === undefined) return deps;
  // Loaded only here: without Model Express, neither protobufjs nor grpc-js is in the process.
  const { createModelExpressClient, parseModelExpressUrl } = await import('./model-express.js');
  const target = parseModelExpressUrl(modelExpressUrl);
  if (!target.ok) throw new ConfigError([{ key: 'MODEL_EXPRESS_URL', expected: 'an http:// or https:// URL with a host and no path, query or fragment, or a gRPC target', received: target.error }]);
  return { ...deps, modelExpress: await createModelExpressClient(modelExpressUrl) };
}

/**
 * The LPX routes answer nothing and read nothing while lpx.enabled=false (see ./lpx.ts). An event
 * for a DGD this process already found converged costs one read (./quiet.ts).
 */
const reconcile: FunctionDefinition<ReconcileDeps> = {
  name: 'reconcile',
  routes: [withQuietPasses(withScalingAdapters(dgdRoute)), ...childRoutes, dgdsaRoute, lpxGraphDeploymentRoute, lpuPipelineRequestRoute, lpxConfigMapRoute],
  init: (base) => init(base),
  // A resync reads each kind once, in bulk, and decides every DGD from that (./resync.ts).
  resyncDeps,
};
export default reconcile;
