/**
 * Who may change the replicas of a component whose replicas a DynamoGraphDeploymentScalingAdapter
 * owns (`scalingAdapter` set): only the control plane's own service accounts (the configured
 * principals) and the Planner's service account; everyone else scales through the adapter.
 *
 * Source: upstream internal/webhook/validation (v1beta1 `validateReplicasChanges`: replicas
 * omitted count as 1; components new in the update are not checked; one error per component,
 * sorted by name) and internal/webhook/common.go `CanModifyDGDReplicas` (only service-account
 * usernames `system:serviceaccount:<ns>:<name>`; an exact match of a configured operator
 * principal, or any namespace's `planner-serviceaccount`; no user info fails closed).
 * @module
 */
import { PLANNER_SERVICE_ACCOUNT_NAME, type FieldIssue } from '../../api/index.js';
import { componentPath, type AdmissionContext } from './common.js';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/**
 * Whether `username` may change adapter-managed replicas.
 * In: the request's `userInfo.username` (undefined: unknown, fails closed), the configured
 * principals (full usernames). Source: upstream `CanModifyDGDReplicas`. Pure.
 */
export function canModifyAdapterManagedReplicas(username: string | undefined, principals: readonly string[]): boolean {
  if (username === undefined || !username.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
  if (principals.includes(username)) return true;
  const parts = username.split(':');
  return parts.length === 4 && parts[3] === PLANNER_SERVICE_ACCOUNT_NAME;
}

/**
 * On UPDATE, refuses a replica change of a component with `scalingAdapter` unless the requester
 * may make it ({@link canModifyAdapterManagedReplicas}).
 * In: ctx.dgd/ctx.oldComponents, ctx.username, ctx.config.replicasModifiers. Out: Forbidden at
 * `spec.components[i].replicas`: "cannot be modified directly when scaling adapter is enabled;
 * scale or update the related DynamoGraphDeploymentScalingAdapter instead" (upstream's text,
 * without the path it repeats). Pure.
 */
export function validateScalingAdapterReplicas(ctx: AdmissionContext): FieldIssue[] {
  if (!ctx.isUpdate || canModifyAdapterManagedReplicas(ctx.username, ctx.config.replicasModifiers ?? [])) return [];
  const issues: FieldIssue[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    const old = ctx.oldComponents.get(component.name);
    if (component.scalingAdapter === undefined || old === undefined) return;
    const from = old.replicas ?? 1;
    const to = component.replicas ?? 1;
    if (from === to) return;
    issues.push({
      path: `${componentPath(index)}.replicas`,
      type: 'Forbidden',
      detail: 'cannot be modified directly when scaling adapter is enabled; scale or update the related DynamoGraphDeploymentScalingAdapter instead',
    });
  });
  return issues;
}
