/** What a person starting Hangar on a terminal needs first: where it listens, how to authenticate, what it stores in. */
export function startBanner(options: { url: string; tokenFile?: string; stores: { sql: string; events: string; cache: string } }): string {
  const { url, tokenFile, stores } = options;
  const lines = [
    '',
    `  Hangar is serving ${url}`,
    `    API           ${url}/api/meta`,
    `    Bearer token  ${tokenFile ? `the contents of ${tokenFile}` : 'Hangar:Api:AuthToken as configured'}`,
    `    Stores        sql ${stores.sql}, events ${stores.events}, pub/sub ${stores.cache}`,
    '',
    '',
  ];
  return lines.join('\n');
}
