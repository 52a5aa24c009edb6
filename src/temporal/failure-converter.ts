/**
 * The failure converter every msgflow client, worker and workflow bundle uses: failure messages and stack
 * traces travel in `encodedAttributes`, a payload, so the payload codec encrypts them like any other data
 * (a provider error may echo a number). Loaded by path (`failureConverterPath`): the worker `require()`s it
 * and the bundler packs it into the workflow sandbox, so it stays pure and has no type annotations, which
 * lets Node load it from source as well as from dist.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
