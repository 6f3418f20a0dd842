/**
 * Quiet DGD events: an event for a DynamoGraphDeployment this process already found converged
 * costs one read. Wraps the DGD route (with its scaling adapters): reads the DGD (the pass's
 * first read, which the full pass reuses), and when `isQuietDgdEvent` (shared/domain, pure)
 * says its last full pass here saw this very stored DGD, wrote nothing, and no event for one of
 * its children or a resync tick came since, answers Done with no more reads and no writes.
 * Otherwise runs the full pass, counting its writes, and when it ended Done having written
 * nothing, records the DGD as quiet (`quietPassRecordOf`). Why that is sound, with several
 * instances and with Knative scaling to zero: shared/domain/dgd/quiet-pass.ts.
 * Without records in the deps (a resync's passes, replay, tests), the route runs as it is.
 * @module
 */
import { DGD_KIND, DGD_V1BETA1 } from '../../shared/api/index.js';
import { isQuietDgdEvent, quietPassRecordOf } from '../../shared/domain/index.js';
import { passKube, type Kube } from '../../shared/kube/index.js';
import { DONE, type Route } from '../../shared/runtime/index.js';
import type { ReconcileDeps } from './dgd.js';

/** The DGD route, answering events for quiet DGDs from the DGD alone. */
export function withQuietPasses(dgdRoute: Route<ReconcileDeps>): Route<ReconcileDeps> {
  return {
    ...dgdRoute,
    handle: async (event, deps) => {
      const records = deps.quietPasses;
      if (records === undefined) return dgdRoute.handle(event, deps);
      const { namespace, name } = event.key;
      const ticket = records.begin();
      const counted = countingWrites(deps.kube);
      // One pass's client: the full pass's load gets this read of the DGD from memory.
      const pass = { ...deps, kube: passKube(counted.kube) };
      const parent = await pass.kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
      if (parent !== undefined && isQuietDgdEvent(records.find(namespace, name), parent, deps.now().getTime())) {
        deps.log.debug({ resourceVersion: parent.metadata.resourceVersion }, 'Skipped quiet DynamoGraphDeployment');
        return DONE;
      }
      const outcome = await dgdRoute.handle(event, pass);
      const record = parent === undefined ? undefined : quietPassRecordOf(parent, deps.now().getTime());
      if (outcome.kind === 'Done' && counted.writes() === 0 && record !== undefined) records.record(namespace, name, ticket, record);
      return outcome;
    },
  };
}

/** `kube` with a count of the writes sent through it (attempted, whatever their answer; dry runs are not writes). */
function countingWrites(kube: Kube): { readonly kube: Kube; writes(): number } {
  let writes = 0;
  const count = <T>(write: () => Promise<T>): Promise<T> => {
    writes += 1;
    return write();
  };
  return {
    writes: () => writes,
    kube: {
      fieldManager: kube.fieldManager,
      get: (ref) => kube.get(ref),
      list: (apiVersion, kind, namespace, options) => kube.list(apiVersion, kind, namespace, options),
      apply: (obj, options) => count(() => kube.apply(obj, options)),
      applyStatus: (obj, options) => count(() => kube.applyStatus(obj, options)),
      create: (obj, options) => (options?.dryRun === true ? kube.create(obj, options) : count(() => kube.create(obj, options))),
      replace: (obj) => count(() => kube.replace(obj)),
      delete: (ref, options) => count(() => kube.delete(ref, options)),
      createEvent: (intent) => count(() => kube.createEvent(intent)),
      scale: (ref, replicas) => count(() => kube.scale(ref, replicas)),
    },
  };
}
