/** The bodies of the ```ts fenced blocks of a markdown page, in order. */
export function typeScriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The pages whose TypeScript blocks users copy: the README's quick start and the client and broker guides. */
export const PAGES_WITH_CODE = ['README.md', 'docs/client.md', 'docs/broker.md'] as const;
