/**
 * Which CRD files a test or dev API server gets: ours (`infra/chart/files/crds/`), Grove's and Knative's
 * (`../shared/crds/`), and reading CustomResourceDefinition documents out of YAML files.
 *
 * `../shared` is resolved from the repository root, never from the working directory: CI
 * clones the repository elsewhere with a copy of `shared/` beside it.
 * @module
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { parseAllDocuments } from 'yaml';

import { REPO_ROOT } from './binaries.js';

/** `<repo>/../shared`, the folder every developer and CI run has beside the project. */
export function sharedDir(repoRoot: string = REPO_ROOT): string {
  return path.resolve(repoRoot, '..', 'shared');
}

/** A CustomResourceDefinition as read from YAML (only the fields the harness uses are typed). */
export interface CrdDocument {
  apiVersion: string;
  kind: 'CustomResourceDefinition';
  metadata: { name: string; [field: string]: unknown };
  spec: {
    group: string;
    names: { plural: string; kind: string; [field: string]: unknown };
    versions: Array<{ name: string; served: boolean; [field: string]: unknown }>;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** The CRD as loaded, with the file it came from. */
export interface LoadedCrd {
  readonly file: string;
  readonly crd: CrdDocument;
}

/**
 * The Grove CRD files to install: per kind (`<group>_<plural>`), the `.coherent` variant when
 * there is one, else the plain file. Other variants (`.coherent-updates-branch`) are skipped.
 * That gives podcliquesets, podcliques, podcliquescalinggroups, podgangmaps and
 * scheduler.grove.io_podgangs from PR #649 (`.coherent`), plus clustertopologybindings.
 * Source: ../shared/crds/grove/README.md; ../shared/upstream-notes/grove.md A.0, A.1.
 */
export async function groveCrdFiles(groveDir: string = path.join(sharedDir(), 'crds', 'grove')): Promise<string[]> {
  const byKind = new Map<string, { plain?: string; coherent?: string }>();
  for (const file of await yamlFilesIn(groveDir, false)) {
    const stem = path.basename(file).replace(/\.ya?ml$/, '');
    const underscore = stem.indexOf('_');
    const dot = stem.indexOf('.', underscore);
    const kindKey = dot === -1 ? stem : stem.slice(0, dot);
    const variant = dot === -1 ? '' : stem.slice(dot + 1);
    const entry = byKind.get(kindKey) ?? {};
    if (variant === '') entry.plain = file;
    else if (variant === 'coherent') entry.coherent = file;
    byKind.set(kindKey, entry);
  }
  return [...byKind.values()]
    .flatMap((entry) => {
      const chosen = entry.coherent ?? entry.plain;
      return chosen === undefined ? [] : [chosen];
    })
    .sort();
}

/**
 * Every CRD file the product's API server needs: `infra/chart/files/crds/**.yaml` (ours; the folder may be
 * absent or empty), Grove (see groveCrdFiles) and Knative (`../shared/crds/knative/*.yaml`).
 */
export async function defaultCrdFiles(repoRoot: string = REPO_ROOT): Promise<string[]> {
  const crds = path.join(sharedDir(repoRoot), 'crds');
  return [
    ...(await yamlFilesIn(path.join(repoRoot, 'infra', 'chart', 'files', 'crds'), true)),
    ...(await groveCrdFiles(path.join(crds, 'grove'))),
    ...(await yamlFilesIn(path.join(crds, 'knative'), false)),
  ];
}

/** The `*.yaml` / `*.yml` files in `dir` (recursively if asked), sorted; [] when `dir` is absent. */
export async function yamlFilesIn(dir: string, recursive: boolean): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive });
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile() && /\.ya?ml$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/**
 * Reads every CustomResourceDefinition document from `files` (other documents are ignored).
 * Throws when a file is not valid YAML or two files define the same CRD.
 */
export async function loadCrds(files: readonly string[]): Promise<LoadedCrd[]> {
  const loaded: LoadedCrd[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const documents = parseAllDocuments(await readFile(file, 'utf8'));
    for (const document of documents) {
      if (document.errors.length > 0) {
        throw new Error(`cannot parse ${file}: ${document.errors.map((e) => e.message).join('; ')}`);
      }
      const value: unknown = document.toJS({ maxAliasCount: -1 });
      if (!isCrd(value)) continue;
      const previous = seen.get(value.metadata.name);
      if (previous !== undefined) {
        throw new Error(`CRD ${value.metadata.name} is defined twice: in ${previous} and ${file}`);
      }
      seen.set(value.metadata.name, file);
      loaded.push({ file, crd: value });
    }
  }
  return loaded;
}

function isCrd(value: unknown): value is CrdDocument {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    record['kind'] === 'CustomResourceDefinition' &&
    typeof record['apiVersion'] === 'string' &&
    record['apiVersion'].startsWith('apiextensions.k8s.io/') &&
    typeof record['metadata'] === 'object' &&
    typeof record['spec'] === 'object'
  );
}
