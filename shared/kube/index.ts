/**
 * `shared/kube`: the functions' only way to read and write the Kubernetes API (STYLE.md §24).
 * Over node:http/node:https (./transport.ts; client-node only to read a kubeconfig file): get (404 is Gone), list, server-side apply of an
 * object and of its status, replace with a resourceVersion precondition, delete (404 is done),
 * events.k8s.io/v1 Events; every failure classified once as TransientError or PermanentError.
 * @module
 * @see ../../../shared/DESIGN.md "Writes"
 */
export {
  createKube,
  type ApplyObject,
  type CreateKubeOptions,
  type DeleteOptions,
  type EventIntent,
  type Kube,
  type KubeObject,
  type ListOptions,
  type ObjectMeta,
  type ObjectRef,
} from './client.js';
export { passKube } from './pass-kube.js';
export { createListSnapshot, matchesLabels, parseLabelSelector, type KubeReader, type ListSnapshotOptions } from './snapshot.js';
export { classifyKubeError, isResourceVersionConflict, KubeHttpError, kubeStatusOf, type KubeStatus } from './errors.js';
export { ENV_SERVICE_ACCOUNT_DIR, inClusterConfig, loadKubeConnection, loadKubeconfigFile, SERVICE_ACCOUNT_DIR, type KubeConnectionConfig } from './transport.js';
// Type only: a value re-export would tie client-node to every function's start chunk.
export type { KubeConfig } from '@kubernetes/client-node';
