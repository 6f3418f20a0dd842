/**
 * The route table lookup: which route takes an object, and which routes a resync covers.
 * A route matches on kind and API group; the version is ignored because the API server
 * converts between served versions (DGD v1alpha1 and v1beta1 name the same object).
 * @module
 */
import type { HandlerDeps, ObjectKey, Route } from './contract.js';

/**
 * The API group of an apiVersion: `nvidia.com/v1beta1` -> `nvidia.com`, core `v1` -> `""`.
 * Pure.
 */
export function apiGroupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/**
 * Finds the route that takes the object named by `key`: same kind, same API group.
 * Out: the first matching route, or undefined (the host then skips the event with 2xx: a
 * Trigger filter mismatch is not an error). Source: DESIGN.md "Events in, answers out". Pure.
 */
export function findRoute<D extends HandlerDeps>(
  routes: readonly Route<D>[],
  key: Pick<ObjectKey, 'apiVersion' | 'kind'>,
): Route<D> | undefined {
  const group = apiGroupOf(key.apiVersion);
  return routes.find((route) => route.kind === key.kind && apiGroupOf(route.apiVersion) === group);
}

/** The routes a resync event asks for: `kind` and `apiVersion` narrow when given. */
export interface ResyncFilter {
  readonly kind: string | undefined;
  /** Compared by API group only, like {@link findRoute}. */
  readonly apiVersion: string | undefined;
}

/**
 * The routes a resync covers: those with `listKeys`, narrowed by the event's `kind` and
 * `apiversion` extensions when present. Out: routes in table order (possibly none). Pure.
 */
export function resyncRoutes<D extends HandlerDeps>(
  routes: readonly Route<D>[],
  filter: ResyncFilter,
): Route<D>[] {
  return routes.filter(
    (route) =>
      route.listKeys !== undefined &&
      (filter.kind === undefined || route.kind === filter.kind) &&
      (filter.apiVersion === undefined || apiGroupOf(route.apiVersion) === apiGroupOf(filter.apiVersion)),
  );
}
