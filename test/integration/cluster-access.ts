/**
 * How each integration file uses the run's shared control plane, which decides what runs beside
 * it (test/harness/cluster-lock.ts; docs/development.md "Where the suite's time goes"):
 *
 * - `none`: starts its own control plane (`dynamo-fn dev`, or startControlPlane) or uses none;
 *   runs beside anything.
 * - `shared`: keeps to namespaces of its own on the shared plane and calls its functions
 *   directly (no event bridge, no resync beyond its namespace); runs beside other `shared` files.
 * - `exclusive` (every file not listed): writes or reads something cluster-scoped another file
 *   would see (Nodes, whose GPUs DGDR discovery counts; a chart install's ClusterRoles and
 *   webhook configurations; CRDs), or runs a function behind the event bridge or a resync, which
 *   watch and list every namespace; runs with the shared plane to itself.
 *
 * A new file is `exclusive` until shown to be otherwise.
 * @module
 */
import path from 'node:path';

import type { ClusterLockMode } from '../harness/cluster-lock.js';

const ACCESS: Readonly<Record<string, 'none' | 'shared'>> = {
  'dev-chart': 'none',
  'dev-grove-simulation': 'none',
  'dev-profiler': 'none',
  'dev-v1beta2': 'none',
  'profile-local-cli': 'none',
  'profiler-local': 'none',
  'reconcile-quiet-resync': 'none',
  'resync-storm': 'none',
  // Its webhook configurations select only its namespace (namespaceSelector).
  'admission': 'shared',
  'conversion': 'shared',
  'explain': 'shared',
  'kube': 'shared',
  'lpx': 'shared',
  'lpx-configmaps': 'shared',
  'lpx-deployment-v1': 'shared',
  'lpx-derived-requests': 'shared',
  'lpx-pod-dry-run': 'shared',
  'lpx-runtime-partitions': 'shared',
  'pod-dry-run': 'shared',
  'profiling-job-pod-security': 'shared',
  // Their ClusterRoles and bindings have test-unique names; the resync listings they prove are
  // filtered to their namespace.
  'rbac': 'shared',
  'rbac-cleanup': 'shared',
  'rbac-lpx': 'shared',
};

/** The lock a test file takes on the shared plane, from its path; undefined: none. */
export function clusterLockModeOf(file: string): ClusterLockMode | undefined {
  const access = ACCESS[path.basename(file).replace(/\.test\.ts$/, '')];
  return access === 'none' ? undefined : (access ?? 'exclusive');
}
