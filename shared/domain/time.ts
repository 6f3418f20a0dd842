/**
 * Kubernetes time stamps.
 * @module
 */

/**
 * A `metav1.Time` as the API server stores it: RFC 3339 in UTC with whole seconds
 * (`2026-12-01T08:00:00Z`); the fraction is dropped, never rounded up, as Go's
 * `metav1.Time.MarshalJSON` does (`time.RFC3339`, truncated to the second). Conditions'
 * `lastTransitionTime` use it. Source: k8s.io/apimachinery pkg/apis/meta/v1/time.go. Pure.
 */
export function toKubeTime(at: Date): string {
  return at.toISOString().replace(/\.\d+Z$/, 'Z');
}
