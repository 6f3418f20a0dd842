/**
 * The fields of an OpenAPI v3 schema as `kubectl explain` names them (`spec.components.name`: an
 * array's items are explained under the array's own path), and which of them carry no
 * description. Used on our generated CRDs (test/unit/crds.test.ts) and on what the API server
 * publishes for them (test/integration/explain.test.ts).
 * @module
 */

/** The part of an OpenAPI v3 schema node the walk reads. */
export interface SchemaNode {
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
}

/** Every field path under `node` with its schema node; the root's `metadata` is the API server's ObjectMeta and skipped. */
export function fields(node: SchemaNode, path = ''): { readonly path: string; readonly node: SchemaNode }[] {
  const element = node.items;
  const children = Object.entries({ ...element?.properties, ...node.properties })
    .filter(([name]) => !(path === '' && name === 'metadata'))
    .flatMap(([name, child]) => {
      const childPath = path === '' ? name : `${path}.${name}`;
      return [{ path: childPath, node: child }, ...fields(child, childPath)];
    });
  // Arrays of arrays: the inner items are explained under the same path too.
  const nested = element?.items === undefined ? [] : fields({ items: element.items }, path);
  return [...children, ...nested];
}

/** Field paths under `node` without a description. */
export function undescribedFields(node: SchemaNode): string[] {
  return fields(node).filter(({ node: field }) => field.description === undefined).map(({ path }) => path);
}
