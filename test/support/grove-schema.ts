/**
 * Validates objects against the Grove CRD's OpenAPI schema with ajv (the structural part;
 * CEL rules are checked by the real API server in the integration tests).
 * @module
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { sharedDir } from './paths.js';

const cache = new Map<string, ValidateFunction>();

/** The ajv validator of a CRD file's first version schema, relative to ../shared/crds/. */
export function crdValidator(relativePath: string): ValidateFunction {
  const cached = cache.get(relativePath);
  if (cached !== undefined) return cached;
  const crd = parse(readFileSync(resolve(sharedDir, 'crds', relativePath), 'utf8')) as {
    spec: { versions: { schema: { openAPIV3Schema: object } }[] };
  };
  const schema = crd.spec.versions[0]?.schema.openAPIV3Schema;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(schema ?? {});
  cache.set(relativePath, validate);
  return validate;
}

export const GROVE_PCS_CRD = 'grove/grove.io_podcliquesets.coherent.yaml';
