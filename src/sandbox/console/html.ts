/**
 * HTML built from template literals where every interpolated value is escaped unless it is already `Html`
 * (the result of another `html` template, or `raw()` for a constant). Arrays are joined, null/undefined/false
 * render as nothing, so views can write `${cond && html`…`}` and `${rows.map(row)}`.
 */
export class Html {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | boolean | null | undefined | Part[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(part: Part): string {
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  if (part === null || part === undefined || part === false) return '';
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i += 1) out += render(parts[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Trusted markup: only for constants written in this folder, never for data. */
export function raw(markup: string): Html {
  return new Html(markup);
}
