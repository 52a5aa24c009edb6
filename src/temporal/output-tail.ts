/** Keeps the last lines of a child process's output, for error messages (never logged wholesale). */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export class OutputTail {
  private readonly lines: string[] = [];

  constructor(private readonly max = 40) {}

  /** Reads `stream` line by line into the tail, passing each line on to `onLine` too. */
  follow(stream: Readable | null, onLine?: (line: string) => void): void {
    if (!stream) return;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      this.push(line);
      onLine?.(line);
    });
  }

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.max) this.lines.shift();
  }

  toString(): string {
    return this.lines.length === 0 ? '(no output)' : this.lines.join('\n');
  }
}
