/** The ```sh blocks of one "## " section of a Markdown file, in order, as written. */
export function shellBlocks(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const blocks: string[] = [];
  let current: string[] | undefined;
  for (const line of lines.slice(start + 1)) {
    if (current === undefined && /^## /.test(line)) break;
    if (current === undefined && /^```sh\s*$/.test(line)) current = [];
    else if (current !== undefined && /^```\s*$/.test(line)) {
      blocks.push(current.join('\n') + '\n');
      current = undefined;
    } else current?.push(line);
  }
  if (current !== undefined) throw new Error(`an unclosed \`\`\`sh block in "## ${heading}"`);
  return blocks;
}

/** Each `from` replaced by its `to` in every block; throws when a `from` occurs in none (the text moved on). */
export function substitute(blocks: string[], mapping: [from: string, to: string][]): string[] {
  for (const [from] of mapping) {
    if (!blocks.some((b) => b.includes(from))) throw new Error(`"${from}" is in none of the blocks: update the mapping`);
  }
  return blocks.map((b) => mapping.reduce((text, [from, to]) => text.split(from).join(to), b));
}
