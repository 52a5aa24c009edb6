/** A scripted stand-in for fetch, for the client's unit tests: records each request, answers from a script. */
export interface RecordedRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: unknown;
}

export type Answer =
  | { status: number; body?: unknown; headers?: Record<string, string>; rawBody?: string }
  | { networkError: string }
  | { hang: true };

export interface FakeFetch {
  fetch: typeof fetch;
  requests: RecordedRequest[];
}

/** Answers requests in order from `script`; the last answer repeats once the script runs out. */
export function fakeFetch(...script: Answer[]): FakeFetch {
  const requests: RecordedRequest[] = [];
  const impl = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    requests.push({
      url: new URL(String(input)),
      method: init.method ?? 'GET',
      headers,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const answer = script[Math.min(requests.length - 1, script.length - 1)];
    if (!answer) throw new Error('fakeFetch: empty script');
    if ('networkError' in answer) throw new TypeError('fetch failed', { cause: new Error(answer.networkError) });
    if ('hang' in answer) {
      return new Promise<Response>((_, reject) => {
        init.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
      });
    }
    const text = answer.rawBody ?? (answer.body === undefined ? null : JSON.stringify(answer.body));
    return new Response(answer.status === 204 ? null : text, {
      status: answer.status,
      headers: { 'content-type': 'application/json', ...answer.headers },
    });
  };
  return { fetch: impl as typeof fetch, requests };
}

/** A well-formed SmsSendResult for two recipients. */
export function smsResult(overrides: Record<string, unknown> = {}) {
  return {
    campaign_id: 'cmp_1',
    status: 'queued',
    segments: 1,
    encoding: 'GSM-7',
    cost: 8,
    currency: 'USD',
    messages: [
      { provider_message_id: 'msg_1', mobile_number: '+2348012345678', status: 'queued' },
      { provider_message_id: 'msg_2', mobile_number: '+2348012345679', status: 'queued' },
    ],
    ...overrides,
  };
}
