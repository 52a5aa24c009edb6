/**
 * Personal texts: each recipient's message rendered from the campaign's template and their audience fields,
 * and a page's recipients grouped by text, since one provider request carries one text. Rendering happens
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
import { AUDIENCE_FAILURES, audienceFailure } from './audience-failures.js';

/** Recipients of a page that share one request: a run of `size` consecutive recipients. */
export interface RecipientGroup {
  size: number;
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

/**
 * Orders recipients so those with the same key (their text) are consecutive, groups in order of first
 * appearance, and says how long each run is. One key for all gives one group: the page as it was.
 */
export function groupByKey(recipients: readonly string[], keys: readonly string[]) {
  const byKey = new Map<string, string[]>();
  recipients.forEach((recipient, i) => {
    const members = byKey.get(keys[i]!);
    if (members) members.push(recipient);
    else byKey.set(keys[i]!, [recipient]);
  });
  const groups = [...byKey.values()];
  return { recipients: groups.flat(), groups: groups.map((g): RecipientGroup => ({ size: g.length })) };
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
