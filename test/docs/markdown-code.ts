/** The bodies of the ```ts fenced blocks of a markdown page, in order. */
export function typeScriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}
