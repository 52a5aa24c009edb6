/**
 * Personal texts and local hours: each recipient's message rendered from the campaign's template and their
 * audience fields, each recipient's time zone for a window in local hours, and a page's recipients grouped
 * by both, since one provider request carries one text (and is sent in one zone's window). This happens
 * here, in activities: workflows see only groups of numbers, so texts and fields never fill a history.
 */
import {
  type AudienceFields,
  missingFieldMessage,
  parseTemplate,
  renderTemplate,
  type TemplatePart,
} from '../src/api/message-template.js';
import { countSegments } from '../src/api/segments.js';
import type { SendWindow } from '../src/api/campaign-io.js';
import { AUDIENCE_FAILURES, audienceFailure } from '../src/audience/failures.js';
import { recipientTimeZone } from './recipient-time-zone.js';

/** Recipients of a page that share one request: a run of `size` consecutive recipients (in `timeZone`). */
export interface RecipientGroup {
  size: number;
  /** For a window in each recipient's local hours: the zone the group's window is in. */
  timeZone?: string;
}

/** A template with placeholders, parsed; null for a message that is the same for everyone. */
export function personalTemplate(message: string): TemplatePart[] | null {
  const parsed = parseTemplate(message);
  if (!parsed.ok) throw audienceFailure(AUDIENCE_FAILURES.invalidFormat, `the message: ${parsed.reason}`);
  return parsed.fields.length > 0 ? parsed.parts : null;
}

/** The recipients of a page as the template sees them: fields aligned with recipients, positions in the page. */
export interface PageRecipients {
  recipients: string[];
  positions: number[];
  fields?: Array<AudienceFields | undefined>;
  /** Position of the page's first entry in the audience (for naming a row). */
  firstIndex: number;
}

/** Each recipient's text; a missing field fails naming the field and the row (never the number or the text). */
export function renderTexts(template: readonly TemplatePart[], page: PageRecipients): string[] {
  return page.recipients.map((_, i) => {
    const rendered = renderTemplate(template, page.fields?.[i]);
    if (!rendered.ok) {
      throw audienceFailure(
        AUDIENCE_FAILURES.fieldMissing,
        missingFieldMessage(rendered.missing, page.firstIndex + page.positions[i]!),
      );
    }
    return rendered.text;
  });
}

/** Each recipient's zone for a window in local hours; a recipient whose zone cannot be told fails naming the row. */
export function timeZonesOf(window: Pick<SendWindow, 'timeZoneField' | 'defaultTimeZone'>, page: PageRecipients) {
  return page.recipients.map((recipient, i) => {
    const zone = recipientTimeZone(recipient, page.fields?.[i], window);
    if (!zone.ok) {
      const row = page.firstIndex + page.positions[i]! + 1;
      throw audienceFailure(
        AUDIENCE_FAILURES.timeZoneUnknown,
        `row ${row} of the audience (rows counted from 1, header not counted): ${zone.reason}`,
      );
    }
    return zone.timeZone;
  });
}

/**
 * Orders recipients so those with the same text and zone are consecutive, groups in order of first
 * appearance, and says how long each run is (and its zone). One text and zone for all gives one group: the
 * page as it was.
 */
export function groupByKey(recipients: readonly string[], texts: readonly string[], zones?: readonly string[]) {
  const byKey = new Map<string, { timeZone?: string; members: string[] }>();
  recipients.forEach((recipient, i) => {
    const key = zones ? `${zones[i]}\n${texts[i]}` : texts[i]!;
    const group = byKey.get(key);
    if (group) group.members.push(recipient);
    else byKey.set(key, { ...(zones ? { timeZone: zones[i] } : {}), members: [recipient] });
  });
  const groups = [...byKey.values()];
  return {
    recipients: groups.flatMap((g) => g.members),
    groups: groups.map(({ timeZone, members }): RecipientGroup => ({
      size: members.length,
      ...(timeZone ? { timeZone } : {}),
    })),
  };
}

/** Segments of every rendered text, for the cost estimate: the total, the longest text's, and UCS-2 texts. */
export class SegmentTally {
  totalSegments = 0;
  maxSegments = 0;
  ucs2Recipients = 0;

  add(text: string): void {
    const { segments, encoding } = countSegments(text);
    this.totalSegments += segments;
    this.maxSegments = Math.max(this.maxSegments, segments);
    if (encoding === 'UCS-2') this.ucs2Recipients += 1;
  }
}
