/** How a page of recipients becomes chunks (pure functions of the campaign's state). */
import { expect, it } from 'vitest';
import { chunkSizes, initialState, queueChunks } from '../../workflows/campaign-state.js';

it('cuts a page of several chunks into chunks of at most chunkSize, in order, numbered on', () => {
  expect(chunkSizes(0, 1000)).toEqual([]);
  expect(chunkSizes(2500, 1000)).toEqual([{ size: 1000 }, { size: 1000 }, { size: 500 }]);
  const state = initialState('2026-01-01T00:00:00.000Z', { kind: 'source', cursor: null, exhausted: false });
  const page = ['1', '2', '3', '4', '5'];
  const chunks = queueChunks(state, page, chunkSizes(page.length, 2));
  expect(chunks.map((c) => [c.number, c.recipients])).toEqual([
    [0, ['1', '2']],
    [1, ['3', '4']],
    [2, ['5']],
  ]);
  expect(state.pendingChunks).toEqual(chunks);
});
