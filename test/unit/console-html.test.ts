/** The console's building blocks: escaping in html`` templates, and one-time sign-in codes. */
import { describe, expect, it } from 'vitest';
import { html, raw } from '../../src/sandbox/console/html.js';
import { SignInCodes } from '../../src/sandbox/console/session.js';

describe('html templates', () => {
  it('escapes every interpolated value unless it is markup built by html or raw', () => {
    const name = `<script>alert("x")</script> & 'quoted'`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;</p>',
    );
    // Under another name, so Prettier leaves the markup of this template as written.
    const markup = html;
    expect(markup`<ul>${['<a>', markup`<li>${'<b>'}</li>`]}</ul>`.value).toBe('<ul>&lt;a&gt;<li>&lt;b&gt;</li></ul>');
    expect(html`${null}${undefined}${false}${0}${raw('<br>')}`.value).toBe('0<br>');
  });
});

describe('one-time sign-in codes', () => {
  it('redeem once, and not after ten minutes', () => {
    let now = 1_000_000;
    const codes = new SignInCodes(() => now);
    const code = codes.issue();
    expect(code).toMatch(/^[\w-]{32}$/);
    expect(codes.redeem(code)).toBe(true);
    expect(codes.redeem(code)).toBe(false);
    const late = codes.issue();
    now += 10 * 60 * 1000;
    expect(codes.redeem(late)).toBe(false);
    expect(codes.redeem('never-issued')).toBe(false);
  });
});
