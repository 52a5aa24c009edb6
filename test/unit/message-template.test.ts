/** Personal texts: template parsing and rendering, grouping recipients by text, and the segment tally. */
import { describe, expect, it } from 'vitest';
import { groupByKey, renderTexts, SegmentTally } from '../../activities/audience-texts.js';
import { CampaignInput } from '../../src/api/campaign-io.js';
import { parseTemplate, renderTemplate, uniformText } from '../../src/api/message-template.js';

const partsOf = (message: string) => {
  const parsed = parseTemplate(message);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.parts;
};

describe('message templates', () => {
  it('fills placeholders from fields, matching names without regard to case', () => {
    const parts = partsOf('Hi {Name}, see you at { clinic }.');
    expect(renderTemplate(parts, { name: ' Ada ', CLINIC: 'Lekki' })).toEqual({
      ok: true,
      text: 'Hi Ada, see you at Lekki.',
    });
    expect(parseTemplate('Hi {name} and {NAME}')).toMatchObject({ ok: true, fields: ['name'] });
  });

  it('names the first missing or blank field', () => {
    const parts = partsOf('Hi {name}, at {clinic}');
    expect(renderTemplate(parts, { name: 'Ada' })).toEqual({ ok: false, missing: 'clinic' });
    expect(renderTemplate(parts, { name: '  ', clinic: 'Lekki' })).toEqual({ ok: false, missing: 'name' });
  });

  it('reads doubled braces as braces, and refuses a lone one with its position', () => {
    expect(uniformText('Code {{A}} is due')).toBe('Code {A} is due');
    expect(uniformText('Hi {name}')).toBeNull();
    expect(parseTemplate('Hi {name')).toMatchObject({ ok: false, reason: expect.stringContaining('position 4') });
    expect(parseTemplate('Hi }')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('closes no placeholder'),
    });
    expect(parseTemplate('Hi {}')).toMatchObject({ ok: false });
  });

  it('is checked by the campaign input: a bad template, and placeholders with an inline audience', () => {
    const base = { sender: 'ACME', audience: { type: 'inline', recipients: ['2348012345678'] } };
    expect(CampaignInput.safeParse({ ...base, message: 'Hi {name' }).error?.issues[0]?.path).toEqual(['message']);
    expect(CampaignInput.safeParse({ ...base, message: 'Hi {name}' }).error?.issues[0]?.message).toContain(
      'inline audience has only numbers',
    );
    expect(CampaignInput.safeParse({ ...base, message: 'Hi {{name}}' }).success).toBe(true);
    const file = { type: 'file', path: '/data/due.csv' };
    expect(CampaignInput.safeParse({ ...base, audience: file, message: 'Hi {name}' }).success).toBe(true);
  });
});

describe('personal texts of a page', () => {
  it('renders each recipient, and a missing field fails naming the row, not the number', () => {
    const parts = partsOf('Hi {name}');
    const page = {
      recipients: ['2348010000001', '2348010000002'],
      positions: [0, 2], // the second recipient was the page's third entry
      fields: [{ name: 'Ada' }, { phone: '2348010000002' }] as Array<Record<string, string>>,
      firstIndex: 1000,
    };
    expect(() => renderTexts(parts, page)).toThrow(/\{name\} has no value in row 1003 of the audience/);
    expect(() => renderTexts(parts, page)).not.toThrow(/2348010000002/);
    expect(renderTexts(parts, { ...page, fields: [{ name: 'Ada' }, { name: 'Bola' }] })).toEqual(['Hi Ada', 'Hi Bola']);
  });

  it('groups equal texts into consecutive runs, in order of first appearance', () => {
    expect(groupByKey(['a', 'b', 'c', 'd', 'e'], ['x', 'y', 'x', 'z', 'y'])).toEqual({
      recipients: ['a', 'c', 'b', 'e', 'd'],
      groups: [{ size: 2 }, { size: 2 }, { size: 1 }],
    });
    // One text for everyone: one group, the page as it was.
    expect(groupByKey(['a', 'b'], ['t', 't'])).toEqual({ recipients: ['a', 'b'], groups: [{ size: 2 }] });
  });

  it('tallies segments per rendered text, GSM-7 or UCS-2', () => {
    const tally = new SegmentTally();
    tally.add('Hi Ada'); // GSM-7, 1 segment
    tally.add('x'.repeat(161)); // GSM-7, 2 segments
    tally.add('Hi Zoë 😊 ' + 'y'.repeat(70)); // UCS-2 (the emoji), 2 segments
    expect(tally).toMatchObject({ totalSegments: 5, maxSegments: 2, ucs2Recipients: 1 });
  });
});
