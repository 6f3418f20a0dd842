/**
 * The output-copier's decisions (upstream-notes/profiler.md §1.3, §1.5): the whole status file is
 * read (a folded `error` keeps its second line, unlike the sidecar's `grep "^error:"`), and the
 * ConfigMap carries upstream's keys, labels and owner reference.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { sharedDir } from '../../test/support/paths.js';
import { finalOutputConfigMap, parseProfilerStatus, relayPhaseConfigMap } from './output.js';

const fixture = (name: string) => readFileSync(path.join(sharedDir, 'fixtures', 'profiler', name), 'utf8');
const dgdr = { name: 'qwen-small', namespace: 'default', uid: 'uid-1' };
const metadata = {
  name: 'dgdr-output-qwen-small',
  namespace: 'default',
  labels: { 'dgdr.nvidia.com/name': 'qwen-small', 'dgdr.nvidia.com/namespace': 'default', 'nvidia.com/managed-by': 'dynamo-operator' },
  ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name: 'qwen-small', uid: 'uid-1', blockOwnerDeletion: true, controller: true }],
};

describe('parseProfilerStatus', () => {
  it('reads a folded error whole (the sidecar relays only its first line: profiler.md §1.3 pitfall)', () => {
    expect(parseProfilerStatus(fixture('out8-without-tool.profiler_status.yaml'))).toEqual({
      status: 'failed',
      phase: 'GeneratingDGD',
      message: 'Profiler failed with exception: DGDOverrideError',
      error: "could not find 'dgd-apply-overrides'; set $DYNAMO_DGD_APPLY_OVERRIDES_BIN or add it to PATH",
      timestamp: '2026-12-01T06:58:24Z',
      finalConfigFile: undefined,
    });
  });

  it('reads a success with outputs.final_config', () => {
    expect(parseProfilerStatus(fixture('out1.profiler_status.yaml'))).toMatchObject({ status: 'success', phase: 'Done', message: 'Profiler completed successfully', finalConfigFile: 'final_config.yaml' });
  });

  it.each([
    { name: 'not YAML', text: 'status: [' },
    { name: 'not a mapping', text: '- a' },
    { name: 'no status', text: 'phase: Done\n' },
  ])('is undefined for $name', ({ text }) => {
    expect(parseProfilerStatus(text)).toBeUndefined();
  });
});

describe('finalOutputConfigMap', () => {
  it('success: phase, message, profiler_status, final_config.yaml, profiler_status.yaml, in that order', () => {
    const status = fixture('out1.profiler_status.yaml');
    const finalConfig = fixture('out1.final_config.yaml');
    expect(finalOutputConfigMap(dgdr, status, finalConfig)).toEqual({
      ok: true,
      profilerStatus: 'success',
      configMap: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata,
        data: { phase: 'Done', message: 'Profiler completed successfully', profiler_status: 'success', 'final_config.yaml': finalConfig, 'profiler_status.yaml': status },
      },
    });
  });

  it('failed: profiler_error is the whole error; the sidecar still succeeds', () => {
    const status = fixture('out8-without-tool.profiler_status.yaml');
    const result = finalOutputConfigMap(dgdr, status, undefined);
    expect(result).toEqual({
      ok: true,
      profilerStatus: 'failed',
      configMap: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata,
        data: {
          phase: 'GeneratingDGD',
          message: 'Profiler failed with exception: DGDOverrideError',
          profiler_status: 'failed',
          profiler_error: "could not find 'dgd-apply-overrides'; set $DYNAMO_DGD_APPLY_OVERRIDES_BIN or add it to PATH",
          'profiler_status.yaml': status,
        },
      },
    });
  });

  it('failed without error: profiler_error is the message (the sidecar uses ${ERROR:-$MESSAGE})', () => {
    const result = finalOutputConfigMap(dgdr, 'status: failed\nmessage: it broke\nphase: SelectingConfig\n', undefined);
    expect(result.ok && result.configMap.data['profiler_error']).toBe('it broke');
  });

  it.each([
    { name: 'no status file', text: undefined, error: 'Status file not found' },
    { name: 'still running', text: 'status: running\nphase: SweepingPrefill\n', error: 'Profiler still running (unexpected)' },
    { name: 'another status', text: 'status: paused\n', error: 'Unknown status: paused' },
  ])('the sidecar fails for $name', ({ text, error }) => {
    expect(finalOutputConfigMap(dgdr, text, undefined)).toEqual({ ok: false, error });
  });
});

describe('relayPhaseConfigMap', () => {
  it('holds only phase and message while the profiler runs', () => {
    const status = parseProfilerStatus("status: running\nmessage: Sweeping parallelization strategies\nphase: SweepingPrefill\n");
    expect(status && relayPhaseConfigMap(dgdr, status)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { phase: 'SweepingPrefill', message: 'Sweeping parallelization strategies' } });
  });

  it('writes nothing before a phase is known', () => {
    const status = parseProfilerStatus('status: running\n');
    expect(status && relayPhaseConfigMap(dgdr, status)).toBeUndefined();
  });
});
