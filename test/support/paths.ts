/** Paths tests read in place: the repository root and ../shared beside it. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const sharedDir = resolve(repoRoot, '..', 'shared');
