/**
 * A resync's bulk reads: a reader that answers `get` and `list` from one paginated LIST per kind,
 * taken the first time the resync reads that kind and kept for the rest of it. Every object's
 * pass of one resync reads the same snapshot, so a resync costs the API server one LIST (plus its
 * pages) per kind it reads, however many objects it covers.
 *
 * Only reads go through it: writes, and any re-read after a write, use the live client. A kind
 * declared `byLabel` is listed with that label's existence selector and answers only lists whose
 * selector requires that label (a `get` of it, or another list, goes to the API server): for
 * kinds too many to list whole (Pods). A list with a field selector or a set-based label
 * selector also goes to the API server.
 *
 * Source: issue 17 item 3 ("A resync reads in bulk: one paginated LIST per kind it needs,
 * grouped by owner in memory and handed to the same pure decisions"); DESIGN.md "Scale".
 * @module
 */
import type { Kube, KubeObject, ListOptions, ObjectRef } from './client.js';

/** The read half of {@link Kube}: what a pass's `load` needs. */
export type KubeReader = Pick<Kube, 'get' | 'list'>;

export interface ListSnapshotOptions {
  /** Kinds listed only with an existence selector on one label (e.g. Pods by `nvidia.com/dgdr-run-uid`). */
  readonly byLabel?: readonly { readonly apiVersion: string; readonly kind: string; readonly label: string }[];
}

/** One `key=value` / `key!=value` / `key` / `!key` term of an equality-based label selector. */
type Requirement =
  | { readonly op: 'eq'; readonly key: string; readonly value: string }
  | { readonly op: 'ne'; readonly key: string; readonly value: string }
  | { readonly op: 'exists'; readonly key: string }
  | { readonly op: 'absent'; readonly key: string };

/**
 * Parses an equality-based label selector (`a=b,c!=d,e,!f`; `==` as `=`); undefined for a
 * set-based one (`in`, `notin`, parentheses), which the caller sends to the API server. Pure.
 */
export function parseLabelSelector(selector: string): readonly Requirement[] | undefined {
  const out: Requirement[] = [];
  for (const raw of selector.split(',')) {
    const term = raw.trim();
    if (term === '') continue;
    if (/[()\s]/.test(term)) return undefined;
    const ne = term.indexOf('!=');
    if (ne > 0) {
      out.push({ op: 'ne', key: term.slice(0, ne), value: term.slice(ne + 2) });
      continue;
    }
    const eq = term.indexOf('=');
    if (eq > 0) {
      out.push({ op: 'eq', key: term.slice(0, eq), value: term.slice(term[eq + 1] === '=' ? eq + 2 : eq + 1) });
      continue;
    }
    if (eq === 0 || ne === 0) return undefined;
    if (term.startsWith('!')) out.push({ op: 'absent', key: term.slice(1) });
    else out.push({ op: 'exists', key: term });
  }
  return out;
}

/** Whether `labels` satisfy every requirement, as the API server matches them. Pure. */
export function matchesLabels(requirements: readonly Requirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  return requirements.every((r) => {
    const value = labels?.[r.key];
    switch (r.op) {
      case 'eq':
        return value === r.value;
      case 'ne':
        return value !== r.value;
      case 'exists':
        return value !== undefined;
      case 'absent':
        return value === undefined;
      default: {
        const unreachable: never = r;
        return unreachable;
      }
    }
  });
}

function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}

function inNamespace(object: KubeObject, namespace: string | undefined): boolean {
  return namespace === undefined || namespace === '' || (object.metadata.namespace ?? '') === namespace;
}

/**
 * A reader over `kube` that lists each kind once, cluster-wide, on its first read, and answers
 * every later read of that kind from memory (namespace and equality label selectors applied
 * here; the objects are shared, never to be mutated). Failures: those of `kube.list`, on the
 * first read of the kind (a failed LIST is not kept: the next read tries again).
 * In a resync only: the snapshot is as old as its first read of a kind.
 */
export function createListSnapshot(kube: KubeReader, options: ListSnapshotOptions = {}): KubeReader {
  const lists = new Map<string, Promise<readonly KubeObject[]>>();
  const byLabel = new Map((options.byLabel ?? []).map((k) => [kindKey(k.apiVersion, k.kind), k.label]));

  function listed(apiVersion: string, kind: string, label: string | undefined): Promise<readonly KubeObject[]> {
    const key = kindKey(apiVersion, kind);
    let list = lists.get(key);
    if (list === undefined) {
      list = kube.list(apiVersion, kind, undefined, label === undefined ? {} : { labelSelector: label });
      lists.set(key, list);
      list.catch(() => lists.delete(key));
    }
    return list;
  }

  return {
    async get(ref: ObjectRef) {
      if (byLabel.has(kindKey(ref.apiVersion, ref.kind))) return kube.get(ref);
      const objects = await listed(ref.apiVersion, ref.kind, undefined);
      return objects.find((o) => o.metadata.name === ref.name && (o.metadata.namespace ?? '') === (ref.namespace ?? ''));
    },

    async list(apiVersion: string, kind: string, namespace?: string, listOptions: ListOptions = {}) {
      const requirements = parseLabelSelector(listOptions.labelSelector ?? '');
      const label = byLabel.get(kindKey(apiVersion, kind));
      const isCovered = requirements !== undefined && listOptions.fieldSelector === undefined && (label === undefined || requirements.some((r) => r.op === 'eq' && r.key === label));
      if (!isCovered) return kube.list(apiVersion, kind, namespace, listOptions);
      const objects = await listed(apiVersion, kind, label);
      return objects.filter((o) => inNamespace(o, namespace) && matchesLabels(requirements, o.metadata.labels));
    },
  };
}
