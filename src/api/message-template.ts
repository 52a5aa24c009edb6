/**
 * A campaign's message as a template: `{name}` is filled from each recipient's audience fields (CSV columns,
 * NDJSON keys, loader rows), matched without regard to case; `{{` and `}}` write literal braces. Pure code
 * without imports: workflows use it too (to tell a personal campaign from a uniform one).
 */

export type TemplatePart = { text: string } | { field: string };

export type ParsedTemplate = { ok: true; parts: TemplatePart[]; fields: string[] } | { ok: false; reason: string };

/** Splits a message into literal text and `{field}` placeholders, or says what is wrong with it. */
export function parseTemplate(message: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  const fields: string[] = [];
  let text = '';
  for (let i = 0; i < message.length; i++) {
    const c = message[i]!;
    if ((c === '{' || c === '}') && message[i + 1] === c) {
      text += c;
      i += 1;
      continue;
    }
    if (c === '}')
      return { ok: false, reason: `a "}" at position ${i + 1} closes no placeholder (write }} for a brace)` };
    if (c !== '{') {
      text += c;
      continue;
    }
    const close = message.indexOf('}', i + 1);
    const field = close < 0 ? '' : message.slice(i + 1, close).trim();
    if (close < 0 || field === '' || field.includes('{')) {
      return {
        ok: false,
        reason: `the "{" at position ${i + 1} opens no placeholder: write {field}, e.g. {name}, or {{ for a brace`,
      };
    }
    if (text) parts.push({ text });
    text = '';
    parts.push({ field });
    if (!fields.some((f) => f.toLowerCase() === field.toLowerCase())) fields.push(field);
    i = close;
  }
  if (text) parts.push({ text });
  return { ok: true, parts, fields };
}

/** A recipient's fields: column or key → value. */
export type AudienceFields = Readonly<Record<string, string>>;

export type RenderedText = { ok: true; text: string } | { ok: false; missing: string };

/** Fills the placeholders from `fields`; a field that is absent or blank is missing (a text never says "Hi ,"). */
export function renderTemplate(template: readonly TemplatePart[], fields: AudienceFields = {}): RenderedText {
  let lowerCased: Map<string, string> | undefined;
  let text = '';
  for (const part of template) {
    if ('text' in part) {
      text += part.text;
      continue;
    }
    let value = Object.hasOwn(fields, part.field) ? fields[part.field] : undefined;
    if (value === undefined) {
      lowerCased ??= new Map(Object.entries(fields).map(([k, v]) => [k.trim().toLowerCase(), v]));
      value = lowerCased.get(part.field.toLowerCase());
    }
    if (value === undefined || value.trim() === '') return { ok: false, missing: part.field };
    text += value.trim();
  }
  return { ok: true, text };
}

/** Where a missing field was, in words an operator can act on (rows count from 1 after any header row). */
export function missingFieldMessage(field: string, entryIndex: number): string {
  return `the message's {${field}} has no value in row ${entryIndex + 1} of the audience (rows counted from 1, header not counted)`;
}

/** The text of a message without placeholders (`{{` read as a brace), or null when it is personal (or malformed). */
export function uniformText(message: string): string | null {
  const parsed = parseTemplate(message);
  if (!parsed.ok || parsed.fields.length > 0) return null;
  return parsed.parts.map((part) => ('text' in part ? part.text : '')).join('');
}
