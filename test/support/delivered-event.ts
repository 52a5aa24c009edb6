/** A provider's signed `message.delivered` status event, posted to a webhook URL as the sandbox would post it. */
import { randomUUID } from 'node:crypto';
import { formatTimestamp } from '../../src/api/common.js';
import { signWebhook } from '../../src/api/signature.js';

export function postDelivered(url: string, secret: string, providerMessageId: string): Promise<Response> {
  const raw = JSON.stringify({
    event: 'message.delivered',
    mobile_number: '+2348012345678',
    provider_message_id: providerMessageId,
    status: 'delivered',
    timestamp: formatTimestamp(new Date()),
  });
  const headers = signWebhook([secret], `evt_${randomUUID()}`, Math.floor(Date.now() / 1000), raw);
  return fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: raw });
}
