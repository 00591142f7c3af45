import { describe, expect, it } from 'vitest';
import { snippets } from '../src/engine/text/snippets.js';

const filler = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

describe('snippets', () => {
  it('cuts two windows around the matched words, every match of a window marked', () => {
    const text = `${filler(60)} disk full ${filler(60)} disk errors and disk again ${filler(60)} disk late`;
    const [first, second, third] = snippets(text, new Set(['disk']));
    expect(third).toBeUndefined();
    expect(first).toMatch(/^….*<em>disk<\/em> full.*…$/);
    expect(second.match(/<em>disk<\/em>/g)).toHaveLength(2);
    expect(second).not.toContain('late');
  });

  it('escapes the text around the marks and finds stems', () => {
    expect(snippets('a <b> & "running" fast', new Set(['run']))).toEqual(['a &lt;b&gt; &amp; &quot;<em>running</em>&quot; fast']);
    expect(snippets('nothing here', new Set(['disk']))).toEqual([]);
  });
});
