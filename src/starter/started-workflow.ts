/** What the starter hands back for a workflow it started: its id, and a way to await its result. */
export interface StartedWorkflow<Result> {
  workflowId: string;
  result(): Promise<Result>;
}

export interface StartOptions {
  /** Business key; the same key reaches the same workflow, so a retried start sends nothing twice. */
  key?: string;
}
