/**
 * Reading Kubernetes objects from YAML text for the CLI: every document is either an object
 * with `kind`, or an error naming the file and document. Alias expansion is bounded, so a
 * "billion laughs" document is an error, not a hang or a crash.
 * @module
 */
import { parseAllDocuments } from 'yaml';

/** One Kubernetes object read from a file; `where` is `<file>#<1-based document>`. */
export interface SourcedObject {
  readonly where: string;
  readonly object: Record<string, unknown>;
}

export interface YamlObjects {
  readonly objects: SourcedObject[];
  readonly errors: string[];
}

/** Aliases a document may expand; far above any real manifest, far below a bomb. */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses every document of `text`. Empty documents are skipped. A document that is not valid
 * YAML, expands too many aliases, or is not a mapping with a string `kind` is an error.
 * Never throws. Pure.
 */
export function readKubeObjects(text: string, source: string): YamlObjects {
  const out: YamlObjects = { objects: [], errors: [] };
  parseAllDocuments(text).forEach((document, index) => {
    const where = `${source}#${index + 1}`;
    if (document.errors.length > 0) {
      const shown = document.errors.slice(0, 3).map((e) => e.message.split('\n')[0]);
      const more = document.errors.length > shown.length ? ` (and ${document.errors.length - shown.length} more)` : '';
      out.errors.push(`${where}: invalid YAML: ${shown.join('; ')}${more}`);
      return;
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      out.errors.push(`${where}: invalid YAML: ${(error as Error).message}`);
      return;
    }
    if (value === null || value === undefined) return;
    if (typeof value !== 'object' || Array.isArray(value) || typeof (value as Record<string, unknown>)['kind'] !== 'string') {
      out.errors.push(`${where}: not a Kubernetes object (expected a YAML mapping with apiVersion, kind and metadata)`);
      return;
    }
    out.objects.push({ where, object: value as Record<string, unknown> });
  });
  return out;
}
