/**
 * The outcomes a workflow has heard for its messages: the first final outcome heard for a message wins, and
 * any later one for the same message — a duplicate, or a conflicting state — changes nothing.
 */
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';

export class FirstOutcomes {
  private readonly byMessage = new Map<string, MessageOutcome>();

  /** Keeps each outcome of `list` whose message has none yet (the first of several in `list` too); returns those kept. */
  keep(list: readonly MessageOutcome[]): MessageOutcome[] {
    const kept: MessageOutcome[] = [];
    for (const outcome of list) {
      if (this.byMessage.has(outcome.providerMessageId)) continue;
      this.byMessage.set(outcome.providerMessageId, outcome);
      kept.push(outcome);
    }
    return kept;
  }

  get(providerMessageId: string): MessageOutcome | undefined {
    return this.byMessage.get(providerMessageId);
  }

  /** The ids of `providerMessageIds` without an outcome yet. */
  open(providerMessageIds: readonly string[]): string[] {
    return providerMessageIds.filter((id) => !this.byMessage.has(id));
  }
}
