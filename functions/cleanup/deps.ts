/**
 * The cleanup function's dependencies: the host's, plus a kube client under field manager
 * `dynamo-cleanup`.
 * @module
 */
import type { Kube } from '../../shared/kube/index.js';
import type { HandlerDeps } from '../../shared/runtime/index.js';

export interface CleanupDeps extends HandlerDeps {
  readonly kube: Kube;
}
