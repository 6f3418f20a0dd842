/**
 * How each integration file uses the run's shared control plane, which decides what runs beside
 * it (vitest.config.ts; docs/development.md "Where the suite's time goes"):
 *
 * - `shared`: keeps to namespaces of its own on the shared plane and calls its functions
 *   directly (no event bridge, no resync beyond its namespace). Project `integration`: these
 *   files run in parallel with each other and with the unit files.
 * - `none`: starts its own control plane (`dynamo-fn dev`, or startControlPlane) or uses none.
 * - `exclusive` (every file not listed): writes or reads something cluster-scoped another file
 *   would see (Nodes, whose GPUs DGDR discovery counts; a chart install's ClusterRoles and
 *   webhook configurations; CRDs), or runs a function behind the event bridge or a resync, which
 *   watch and list every namespace.
 *
 * `none` and `exclusive` files are project `integration-cluster`, run after the others on two
 * workers: an `exclusive` file holds the cluster lock (test/harness/cluster-lock.ts), so it has
 * the shared plane to itself, while a `none` file runs beside it.
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
  // Its objects live in its own namespace.
  'storable-size': 'shared',
  // Its DGD, PodCliqueSet and PodCliques live in its own namespace; it calls handle directly.
  'switch-over': 'shared',
  // Its DGD and children live in its own namespace; it calls handle directly.
  'dgd-status-precondition': 'shared',
  // Its request, DGD and ConfigMap live in its own namespace; it calls the profile handler directly.
  'profile-adoption': 'shared',
  // Their ClusterRoles and bindings have test-unique names; the resync listings they prove are
  // filtered to their namespace.
  'rbac': 'shared',
  'rbac-cleanup': 'shared',
  'rbac-lpx': 'shared',
};

export type ClusterAccess = 'none' | 'shared' | 'exclusive';

/** A test file's access, from its path. */
export function clusterAccessOf(file: string): ClusterAccess {
  return ACCESS[path.basename(file).replace(/\.test\.ts$/, '')] ?? 'exclusive';
}

/** The lock a test file of `integration-cluster` takes, from its path; undefined: none. */
export function clusterLockModeOf(file: string): ClusterLockMode | undefined {
  return clusterAccessOf(file) === 'exclusive' ? 'exclusive' : undefined;
}

/** The `shared` files, as paths from the repository root (project `integration`). */
export const SHARED_FILES: readonly string[] = Object.entries(ACCESS)
  .filter(([, access]) => access === 'shared')
  .map(([name]) => `test/integration/${name}.test.ts`);
