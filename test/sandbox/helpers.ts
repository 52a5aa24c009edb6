/** Small HTTP helpers for the sandbox contract tests: raw fetch calls, so the tests see exactly what goes on the wire. */
// Bodies are raw JSON off the wire: the contract tests read whatever came back, on purpose untyped.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ApiCaller {
  (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
}

/** Calls `baseUrl + path` with the bearer token; objects are sent as JSON, strings as they are. */
export function apiFor(baseUrl: string, token?: string): ApiCaller {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // leave as text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
}

/**
 * Polls `read` until `done` holds. The deadline only stops a broken test from hanging; nothing asserts
 * on how long it took.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  deadlineMs = 10_000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - start > deadlineMs)
      throw new Error(`condition not met after ${deadlineMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.UTC(2026, 0, 15, 12, 0, 0)) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  };
}

export const sms = (recipients: string[], message = 'Hello from the sandbox', sender = 'ACME') => ({
  recipients,
  sender,
  message,
});
