/** Reading a /metrics endpoint as a scraper would: a counter summed over the series it names. */

/** The sum of `name`'s series whose labels include every one of `labels` (`status: '200'` matches `status="200"`). */
export function counterSum(exposition: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  let total = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!wanted.every((label) => line.includes(label))) continue;
    total += Number(line.split(' ').at(-1));
  }
  return total;
}

/** `counterSum` of what `url` (a /metrics endpoint) serves now. */
export async function scrapeCounter(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return counterSum(await response.text(), name, labels);
}
