/**
 * The README and docs/ hold together: every relative link points at a file that exists (and at a
 * heading of it, when the link names one), and docs/index.md links every docs page.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';

const docsDir = resolve(repoRoot, 'docs');
const docPages = readdirSync(docsDir).filter((f) => f.endsWith('.md')).sort();
const pages = [resolve(repoRoot, 'README.md'), ...docPages.map((f) => resolve(docsDir, f))];

/** Markdown text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/`[^`\n]*`/g, '');
}

/** The targets of inline links `[text](target)`, without an optional title. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(markdown: string): Set<string> {
  return new Set([...prose(markdown).matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

const isRelative = (target: string): boolean => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('//');

describe('README.md and docs/*.md links', () => {
  it.each(pages.map((p) => [relative(repoRoot, p), p]))('every relative link in %s points at an existing file and heading', (_name, page) => {
    const text = readFileSync(page, 'utf8');
    const broken: string[] = [];
    for (const target of linkTargets(text).filter(isRelative)) {
      const [file = '', anchor] = target.split('#');
      const path = file === '' ? page : resolve(dirname(page), decodeURIComponent(file));
      if (!existsSync(path)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && anchor !== '' && path.endsWith('.md') && !anchors(readFileSync(path, 'utf8')).has(anchor)) {
        broken.push(`${target}: no heading #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('docs/index.md links every docs page', () => {
    const linked = new Set(
      linkTargets(readFileSync(resolve(docsDir, 'index.md'), 'utf8'))
        .filter(isRelative)
        .map((t) => t.split('#')[0] ?? ''),
    );
    expect(docPages.filter((f) => f !== 'index.md' && !linked.has(f))).toEqual([]);
  });

  it('the README links the docs index', () => {
    expect(linkTargets(readFileSync(resolve(repoRoot, 'README.md'), 'utf8'))).toContain('docs/index.md');
  });
});
