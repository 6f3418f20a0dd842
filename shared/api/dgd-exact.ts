/**
 * The webhook's fast structural check: whether `DgdSchema` would parse a value into an equal
 * object, decided by compiled code instead of by parsing.
 *
 * Why: zod's parse builds a fresh copy of every object it checks; on a 12-component DGD that
 * copy was about half of the validating webhook's own work. A DGD the API server sends a webhook
 * has been pruned and defaulted by our CRD (generated from the same schema), so it has nothing
 * for zod to strip or fill in, and the copy would equal the input. The generated code
 * (./generated/dgd-exact.ts, ajv standalone code from the schema's output form, no ajv at run
 * time) proves that without copying; anything it does not accept goes through zod as before,
 * so every issue and message still comes from zod.
 * @module
 */
import { hasAtMostOneEpp, hasOneKvTopologySource, hasUniqueComponentNames, type Dgd } from './dgd.js';
import { validate as matchesDgdOutputSchema } from './generated/dgd-exact.js';

/**
 * True when `DgdSchema.safeParse(value)` would succeed with data deep-equal to `value`: every
 * field of the right type and within bounds, every defaulted field present, no field a strict
 * object would strip, and the schema's refinements (one epp, unique component names, one
 * kvTransferPolicy topology source) met. False says nothing: parse the value to learn why.
 * In: any value, which must hold no own `__proto__` key (check with `hasPrototypeKeys` first:
 * zod would drop such a key from a map, so the copy would differ). Out: a type guard.
 * Source: DgdSchema (shared/api/dgd.ts). Pure.
 */
export function isExactDgd(value: unknown): value is Dgd {
  if (!(matchesDgdOutputSchema as (data: unknown) => boolean)(value)) return false;
  const spec = (value as Dgd).spec;
  if (!hasAtMostOneEpp(spec.components) || !hasUniqueComponentNames(spec.components)) return false;
  const policy = spec.experimental?.kvTransferPolicy;
  return policy === undefined || hasOneKvTopologySource(policy);
}
