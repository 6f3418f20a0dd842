/**
 * One route's resync, as the function host runs it (shared/runtime/server.ts `runResync`): the
 * function's `resyncDeps` once (a resync's reads from one LIST per kind), the route's
 * `listKeys`, then each key's `handle` with a Reference-mode resync event; for tests that call
 * routes directly (the RBAC proofs). Keys outside `namespace` (other tests' objects on the shared
 * API server) are listed but not handled.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { resyncEventFor, type FunctionDefinition, type HandlerDeps, type Route } from '../../shared/runtime/index.js';

/** Out: each handled key's outcome kind (or `threw <message>`), by name. */
export async function resyncRoute<D extends HandlerDeps>(def: FunctionDefinition<D>, route: Route<D>, deps: D, namespace: string): Promise<Record<string, string>> {
  const resyncDeps = def.resyncDeps?.(deps) ?? deps;
  const keys = (await route.listKeys?.(resyncDeps)) ?? [];
  const outcomes: Record<string, string> = {};
  for (const key of keys.filter((k) => k.namespace === namespace)) {
    const event = resyncEventFor({ id: randomUUID(), type: 'dev.dynamo-fn.resync', source: 'test' }, key);
    outcomes[key.name] = await route.handle(event, resyncDeps).then(
      (outcome) => outcome.kind,
      (error: unknown) => `threw ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return outcomes;
}
