/**
 * What the profiling Job's `output-copier` sidecar does, as pure functions: read the profiler's
 * `profiler_status.yaml` (the whole file, not its first lines) and build the ConfigMap
 * `dgdr-output-<name>` with upstream's exact keys, labels and owner reference.
 *
 * Source: ../shared/upstream-notes/profiler.md §1.3 (sidecar behaviour, ConfigMap keys and labels,
 * the first-line-only pitfall of `grep "^error:"`), §1.5 (status file keys, phases).
 * Pure.
 * @module
 */
import { parse } from 'yaml';

import { DGDR_KIND, DGDR_V1BETA1, LABEL_DGDR_NAME, LABEL_DGDR_NAMESPACE, LABEL_MANAGED_BY, LABEL_VALUE_DYNAMO_OPERATOR } from '../api/index.js';
import { outputConfigMapName } from '../domain/index.js';

/** File names in the profiler's `--output-dir`. */
export const PROFILER_STATUS_FILE = 'profiler_status.yaml';
export const FINAL_CONFIG_FILE = 'final_config.yaml';

/** ConfigMap data keys the sidecar writes (profiler.md §1.3). */
export const OUTPUT_KEY_PHASE = 'phase';
export const OUTPUT_KEY_MESSAGE = 'message';
export const OUTPUT_KEY_PROFILER_STATUS = 'profiler_status';
export const OUTPUT_KEY_PROFILER_ERROR = 'profiler_error';
export const OUTPUT_KEY_FINAL_CONFIG = FINAL_CONFIG_FILE;
export const OUTPUT_KEY_STATUS_FILE = PROFILER_STATUS_FILE;

/** `profiler_status.yaml`, read whole. `status` is `running`, `success` or `failed`. */
export interface ProfilerStatus {
  readonly status: string;
  readonly phase: string | undefined;
  readonly message: string | undefined;
  /** The whole `error` value (the YAML may fold it over several lines). */
  readonly error: string | undefined;
  readonly timestamp: string | undefined;
  readonly finalConfigFile: string | undefined;
}

/**
 * Parses `profiler_status.yaml`.
 * Out: the status, or `undefined` when the text is not a YAML mapping with a string `status`.
 * Source: profiler.md §1.5 (keys `status`, `timestamp`, `message`, `error`, `outputs.final_config`, `phase`). Pure.
 */
export function parseProfilerStatus(text: string): ProfilerStatus | undefined {
  let document: unknown;
  try {
    document = parse(text);
  } catch {
    return undefined;
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return undefined;
  const fields = document as Record<string, unknown>;
  if (typeof fields['status'] !== 'string') return undefined;
  const text_ = (key: string): string | undefined => (typeof fields[key] === 'string' || typeof fields[key] === 'number' ? String(fields[key]) : undefined);
  const outputs = fields['outputs'];
  const finalConfig = typeof outputs === 'object' && outputs !== null ? (outputs as Record<string, unknown>)['final_config'] : undefined;
  return {
    status: fields['status'],
    phase: text_('phase'),
    message: text_('message'),
    error: text_('error'),
    timestamp: text_('timestamp'),
    finalConfigFile: typeof finalConfig === 'string' ? finalConfig : undefined,
  };
}

/** The DGDR a Job profiles (from the Job's `DGDR_*` env). */
export interface DgdrRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/** A ConfigMap as the API server takes it. */
export interface OutputConfigMap {
  readonly apiVersion: 'v1';
  readonly kind: 'ConfigMap';
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly ownerReferences: readonly {
      readonly apiVersion: string;
      readonly kind: string;
      readonly name: string;
      readonly uid: string;
      readonly blockOwnerDeletion: true;
      readonly controller: true;
    }[];
  };
  readonly data: Readonly<Record<string, string>>;
}

/** What the sidecar decides once the profiler container terminated. */
export type OutputCopierResult =
  | { readonly ok: true; readonly configMap: OutputConfigMap; readonly profilerStatus: 'success' | 'failed' }
  /** The sidecar exits 1 with this message (`ERROR: ...` in the upstream script). */
  | { readonly ok: false; readonly error: string };

/**
 * The ConfigMap holding only the relayed phase and message, written while the profiler runs
 * (the sidecar's `relay_phase`). Source: profiler.md §1.3 step 2. Pure.
 */
export function relayPhaseConfigMap(dgdr: DgdrRef, status: ProfilerStatus): OutputConfigMap | undefined {
  if (status.phase === undefined || status.phase === '') return undefined;
  return configMap(dgdr, { [OUTPUT_KEY_PHASE]: status.phase, [OUTPUT_KEY_MESSAGE]: status.message ?? '' });
}

/**
 * The sidecar's final step: `success` -> phase, message, `profiler_status: success`,
 * `final_config.yaml`, `profiler_status.yaml`; `failed` -> phase, message,
 * `profiler_status: failed`, `profiler_error` (the whole `error`, else the message),
 * `profiler_status.yaml`; a missing status file, `running` or another status is the sidecar's
 * own failure (`Status file not found`, `Profiler still running (unexpected)`, `Unknown status: <s>`).
 * In: the status file text (undefined when absent) and final_config.yaml text (undefined when absent).
 * Source: profiler.md §1.3 step 3 and its pitfall (the whole error, not its first line). Pure.
 */
export function finalOutputConfigMap(dgdr: DgdrRef, statusText: string | undefined, finalConfigText: string | undefined): OutputCopierResult {
  if (statusText === undefined) return { ok: false, error: 'Status file not found' };
  const status = parseProfilerStatus(statusText);
  if (status === undefined) return { ok: false, error: 'Unknown status: ' };
  const common = { [OUTPUT_KEY_PHASE]: status.phase ?? '', [OUTPUT_KEY_MESSAGE]: status.message ?? '' };
  switch (status.status) {
    case 'success': {
      const data: Record<string, string> = { ...common, [OUTPUT_KEY_PROFILER_STATUS]: 'success' };
      if (finalConfigText !== undefined) data[OUTPUT_KEY_FINAL_CONFIG] = finalConfigText;
      data[OUTPUT_KEY_STATUS_FILE] = statusText;
      return { ok: true, configMap: configMap(dgdr, data), profilerStatus: 'success' };
    }
    case 'failed':
      return {
        ok: true,
        configMap: configMap(dgdr, {
          ...common,
          [OUTPUT_KEY_PROFILER_STATUS]: 'failed',
          [OUTPUT_KEY_PROFILER_ERROR]: status.error ?? status.message ?? '',
          [OUTPUT_KEY_STATUS_FILE]: statusText,
        }),
        profilerStatus: 'failed',
      };
    case 'running':
      return { ok: false, error: 'Profiler still running (unexpected)' };
    default:
      return { ok: false, error: `Unknown status: ${status.status}` };
  }
}

function configMap(dgdr: DgdrRef, data: Record<string, string>): OutputConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: outputConfigMapName(dgdr.name),
      namespace: dgdr.namespace,
      labels: { [LABEL_DGDR_NAME]: dgdr.name, [LABEL_DGDR_NAMESPACE]: dgdr.namespace, [LABEL_MANAGED_BY]: LABEL_VALUE_DYNAMO_OPERATOR },
      ownerReferences: [{ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, name: dgdr.name, uid: dgdr.uid, blockOwnerDeletion: true, controller: true }],
    },
    data,
  };
}
