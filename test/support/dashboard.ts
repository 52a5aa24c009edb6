/**
 * The Grafana dashboard compose provisions (deploy/grafana/dashboards/msgflow.json), read as its panels' PromQL
 * queries, and the metric names each query reads, so a test can hold them against a real Prometheus.
 */
import { readFileSync } from 'node:fs';

export const DASHBOARD_FILE = 'deploy/grafana/dashboards/msgflow.json';

export interface PanelQuery {
  panel: string;
  expr: string;
}

export function dashboardQueries(file = DASHBOARD_FILE): PanelQuery[] {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr?: string }> }>;
  };
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr ?? '' })),
  );
}

/** The metrics a query selects: names followed by a label matcher `{` or a range `[`. */
export function metricNamesIn(expr: string): string[] {
  return [...new Set([...expr.matchAll(/([a-zA-Z_:][\w:]*)\s*[{[]/g)].map((m) => m[1]!))];
}
