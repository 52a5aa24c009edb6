/** Runs tasks one after another in arrival order (a promise chain: deterministic in the workflow sandbox). */
export class FifoLock {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
