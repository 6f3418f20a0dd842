/**
 * The cleanup function's dependencies: the host's, plus a kube client under field manager
 * `dynamo-cleanup`.
 * @module
 */
import type { Kube, KubeReader } from '../../shared/kube/index.js';
import type { HandlerDeps } from '../../shared/runtime/index.js';

export interface CleanupDeps extends HandlerDeps {
  readonly kube: Kube;
  /** In a resync (tick): its reads, answered from one LIST per kind (shared/kube `createListSnapshot`); a pass's first load reads here, writes and re-reads go to `kube`. */
  readonly snapshot?: KubeReader;
}
