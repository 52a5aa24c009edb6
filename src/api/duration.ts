/**
 * Durations as Temporal's tools write them: Go's syntax (`500ms`, `30s`, `10m`, `1h30m`, `1.5h`) plus `d` for
 * days, as the Temporal CLI accepts. The one parser for every CLI option and environment variable that takes a
 * duration; values come out in milliseconds, the unit msgflow's inputs carry.
 */
import { z } from 'zod';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

const EXAMPLES = 'e.g. 500ms, 30s, 10m, 1h30m (units: ms, s, m, h, d)';

export class DurationError extends Error {
  override name = 'DurationError';
}

/** Milliseconds in `text`; throws a DurationError saying what is wrong. `0` alone needs no unit. */
export function parseDuration(text: string): number {
  const value = text.trim();
  if (value === '0') return 0;
  if (value === '') throw new DurationError(`a duration is required, ${EXAMPLES}`);
  if (/^\d+(\.\d+)?$/.test(value)) throw new DurationError(`"${text}" has no unit: write ${value}s, ${value}m, …`);
  const part = /(\d+(?:\.\d+)?|\.\d+)([a-zµ]+)/gy;
  let total = 0;
  let end = 0;
  for (let match = part.exec(value); match; match = part.exec(value)) {
    const unit = match[2]!;
    if (!Object.hasOwn(UNIT_MS, unit)) {
      throw new DurationError(
        unit === 'us' || unit === 'µs' || unit === 'ns'
          ? `"${text}": the smallest unit is ms`
          : `"${text}": unknown unit "${unit}", ${EXAMPLES}`,
      );
    }
    total += Number(match[1]) * UNIT_MS[unit as Unit];
    end = part.lastIndex;
  }
  if (end !== value.length || end === 0) throw new DurationError(`"${text}" is not a duration, ${EXAMPLES}`);
  if (!Number.isSafeInteger(Math.round(total))) throw new DurationError(`"${text}" is too long`);
  return Math.round(total);
}

/** `90000` → `1m30s`: the shortest form parseDuration reads back (for help texts and messages). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const n = Math.floor(rest / UNIT_MS[unit]);
    if (n > 0) text += `${n}${unit}`;
    rest -= n * UNIT_MS[unit];
  }
  return text;
}

/**
 * A zod schema for a duration written as text, giving milliseconds, optionally bounded; its messages speak in
 * durations (`at most 1d`), not in milliseconds.
 */
export function durationText({ min = 0, max }: { min?: number; max?: number } = {}) {
  return z.string().transform((text, ctx) => {
    try {
      const ms = parseDuration(text);
      if (ms < min) ctx.addIssue({ code: 'custom', message: `must be at least ${formatDuration(min)}` });
      else if (max !== undefined && ms > max)
        ctx.addIssue({ code: 'custom', message: `must be at most ${formatDuration(max)}` });
      return ms;
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
}
