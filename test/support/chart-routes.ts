/**
 * Which of the events the chart sends a function no route of that function takes: an
 * ApiServerSource resource with no route (findRoute: same kind and API group), or a PingSource
 * (a resync with `kind` and `apiversion`, or a tick with `kind` only) with no resync route
 * (resyncRoutes, as the host dispatches it; the host answers such a ping `NoResyncRoute`).
 * Used on shared/api chartFunctions (test/unit/chart-routes.test.ts) and on the rendered chart
 * (test/integration/chart.test.ts).
 */
import type { ChartFunction } from '../../shared/api/index.js';
import { findRoute, resyncRoutes, type FunctionDefinition, type HandlerDeps } from '../../shared/runtime/index.js';
import cleanup from '../../functions/cleanup/index.js';
import profile from '../../functions/profile/index.js';
import reconcile from '../../functions/reconcile/index.js';

/** The chart's CloudEvents functions, by name, as their hosts run them. */
export const DEFINITIONS: Readonly<Record<ChartFunction['name'], FunctionDefinition<HandlerDeps>>> = {
  reconcile: reconcile as unknown as FunctionDefinition<HandlerDeps>,
  profile: profile as unknown as FunctionDefinition<HandlerDeps>,
  cleanup: cleanup as unknown as FunctionDefinition<HandlerDeps>,
};

/** What the chart sends each function that no route of it takes, as readable lines (empty when all is routed). */
export function unroutedChartEvents(functions: readonly ChartFunction[], definitions: Readonly<Record<ChartFunction['name'], FunctionDefinition<HandlerDeps>>>): string[] {
  return functions.flatMap((f) => {
    const routes = definitions[f.name].routes;
    return [
      ...f.sources.flatMap((source) =>
        source.resources.filter((r) => findRoute(routes, r) === undefined).map((r) => `ApiServerSource ${source.name}: ${r.apiVersion} ${r.kind} has no route in ${f.name}`),
      ),
      ...f.pings
        .filter((ping) => resyncRoutes(routes, { kind: ping.kind, apiVersion: ping.apiVersion }).length === 0)
        .map((ping) => `PingSource ${ping.name}: ${ping.apiVersion ?? '(tick)'} ${ping.kind} has no resync route in ${f.name} (the function answers NoResyncRoute)`),
    ];
  });
}

