/**
 * The reconcile function: DynamoGraphDeployment -> Grove PodCliqueSet, Services and status.
 * Deployed as a Knative Service that scales to zero (infra/reconcile.yaml); run locally with
 * `dynamo-fn serve reconcile`.
 * @module
 */
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER_RECONCILE } from '../../shared/api/index.js';
import { DEFAULT_RENDER_CONFIG } from '../../shared/domain/index.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import type { FunctionDefinition, HandlerDeps } from '../../shared/runtime/index.js';
import { route as dgdRoute, type ReconcileDeps } from './dgd.js';

/** The function's dependencies around a given client (the real one, or replay's in-memory one). */
export function depsWithKube(base: HandlerDeps, kube: Kube): ReconcileDeps {
  return {
    ...base,
    kube,
    render: { ...DEFAULT_RENDER_CONFIG, lpxEnabled: base.config.lpxEnabled },
    instance: process.env['K_REVISION'] ?? hostname(),
  };
}

/** Builds the function's dependencies from the host's: a kube client from KUBECONFIG or in-cluster. */
export async function init(base: HandlerDeps): Promise<ReconcileDeps> {
  const kubeConfig = new KubeConfig();
  if (base.config.kubeconfigPath !== undefined) kubeConfig.loadFromFile(base.config.kubeconfigPath);
  else kubeConfig.loadFromCluster();
  return depsWithKube(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_RECONCILE, now: base.now }));
}

const reconcile: FunctionDefinition<ReconcileDeps> = { name: 'reconcile', routes: [dgdRoute], init };
export default reconcile;
