/**
 * Every relative link in README.md, CHANGELOG.md and docs/*.md points at a file of the repository, and every
 * `#anchor` into a Markdown file names one of its headings, so the docs stand alone and nothing dangles.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const pages = ['README.md', 'CHANGELOG.md', ...readdirSync('docs').map((name) => join('docs', name))].filter(
  (file) => file.endsWith('.md') && existsSync(file),
);

/** Inline links and images `[text](target)`, outside fenced code blocks and inline code. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function problemsOf(page: string): string[] {
  const problems: string[] = [];
  for (const link of linksOf(readFileSync(page, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto: …
    const [path = '', anchor] = link.split('#');
    const target = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
    if (relative(ROOT, join(ROOT, target)).startsWith('..')) {
      problems.push(`${page}: ${link} leaves the repository`);
    } else if (!existsSync(target)) {
      problems.push(`${page}: ${link} names no file (${target})`);
    } else if (anchor && statSync(target).isFile() && target.endsWith('.md')) {
      if (!anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
        problems.push(`${page}: ${link} names no heading of ${target}`);
      }
    }
  }
  return problems;
}

describe('documentation links', () => {
  it('finds the pages', () => {
    expect(pages).toContain('README.md');
    expect(pages.filter((page) => page.startsWith('docs'))).not.toHaveLength(0);
  });

  it.each(pages)('%s: every relative link resolves inside the repository', (page) => {
    expect(problemsOf(page)).toEqual([]);
  });
});
