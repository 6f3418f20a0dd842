/**
 * `status.checkpoints` and the `waiting_for_checkpoint` readiness of a DGD whose components
 * restore from a checkpoint (`experimental.checkpoint`), as upstream writes them when the
 * checkpoint is absent.
 *
 * Upstream resolves each component's checkpoint through a `DynamoCheckpoint` object
 * (`dgd_checkpoints_reconciler.go`: `ResolveCheckpointForService`, or `createCheckpointCR` for
 * one it manages) that its checkpoint controller fills by running a checkpoint Job
 * (`checkpoint_controller.go`, `checkpoint_job.go`). Neither the `DynamoCheckpoint` CRD nor
 * that controller exists here (../shared/crds/dynamo/README.md lists `dynamocheckpoints` among
 * the CRDs not carried), so no checkpoint can be created or become ready by this control plane:
 * every checkpoint is absent, and the status is what upstream writes then: per component with
 * a checkpoint, `{checkpointName?, ready: false}` (`checkpointName` only where the spec names
 * one through `checkpointRef`), and, for a `WaitForCheckpoint` component, replicas held at 0 and
 * the Ready reason `waiting_for_checkpoint` naming what it waits for (upstream
 * `applyCheckpointStartupReadiness`). A `ready: true` already on the stored status (written by
 * another checkpoint controller) is kept, so such a controller can release the gate.
 * docs/known-limits.md says so.
 * @module
 */
import type { Component, Dgd } from '../../api/index.js';

export interface ComponentCheckpointStatus {
  readonly checkpointName?: string;
  readonly ready: boolean;
}

interface CheckpointConfig {
  readonly enabled?: unknown;
  readonly startupPolicy?: unknown;
  readonly checkpointRef?: unknown;
}

function checkpointConfig(component: Component): CheckpointConfig | undefined {
  const config = component.experimental?.checkpoint as CheckpointConfig | undefined;
  return config?.enabled === true ? config : undefined;
}

function storedReady(dgd: Pick<Dgd, 'status'>, name: string): boolean {
  const stored = (dgd.status as { checkpoints?: Record<string, { ready?: unknown }> } | undefined)?.checkpoints?.[name];
  return stored?.ready === true;
}

/**
 * `status.checkpoints`: for each non-LPX component with `experimental.checkpoint.enabled`, its
 * `checkpointRef` as `checkpointName` (when set) and `ready` (false, unless the stored status
 * already says true). Undefined when no component has a checkpoint (upstream writes the map only
 * when its checkpoint reconcile returns statuses). Pure.
 */
export function checkpointStatuses(dgd: Pick<Dgd, 'spec' | 'status'>): Record<string, ComponentCheckpointStatus> | undefined {
  const out: Record<string, ComponentCheckpointStatus> = {};
  for (const component of dgd.spec.components) {
    if (component.type === 'lpx') continue;
    const config = checkpointConfig(component);
    if (config === undefined) continue;
    const name = typeof config.checkpointRef === 'string' && config.checkpointRef !== '' ? config.checkpointRef : undefined;
    out[component.name] = { ...(name === undefined ? {} : { checkpointName: name }), ready: storedReady(dgd, component.name) };
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * Whether a component's replicas are held at 0 until its checkpoint is ready:
 * `experimental.checkpoint.enabled` with `startupPolicy: WaitForCheckpoint` and
 * `status.checkpoints[<name>].ready` not true. Held through the scale subresource: its Grove
 * child is seeded with its minimum and scaled to 0 (grove-scaling.ts `templateReplicas`,
 * `desiredChildReplicas`). Source: upstream `buildCliqueForRole`,
 * `shouldGateGroveScalingGroupReplicas`, `dgd_grove_scaler.go`. Pure.
 */
export function isCheckpointGated(dgd: Pick<Dgd, 'status'>, component: Component): boolean {
  const config = checkpointConfig(component);
  return config?.startupPolicy === 'WaitForCheckpoint' && !storedReady(dgd, component.name);
}

/**
 * The Ready message while `WaitForCheckpoint` components wait, or undefined when none does:
 * `Waiting for checkpoints: <component> (<checkpointName>), <component>`, sorted (upstream
 * `applyCheckpointStartupReadiness`). Pure.
 */
export function waitingForCheckpointsMessage(dgd: Pick<Dgd, 'spec' | 'status'>): string | undefined {
  const statuses = checkpointStatuses(dgd) ?? {};
  const waiting: string[] = [];
  for (const component of dgd.spec.components) {
    const config = component.type === 'lpx' ? undefined : checkpointConfig(component);
    const status = statuses[component.name];
    if (config?.startupPolicy !== 'WaitForCheckpoint' || status === undefined || status.ready) continue;
    waiting.push(status.checkpointName === undefined ? component.name : `${component.name} (${status.checkpointName})`);
  }
  if (waiting.length === 0) return undefined;
  waiting.sort();
  return `Waiting for checkpoints: ${waiting.join(', ')}`;
}
