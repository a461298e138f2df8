import { describe, expect, test } from '@jest/globals';
import { Element } from 'domhandler';
import { hintsOf, wordsOf } from './hints.ts';

const hints = (className: string, attribs: Record<string, string> = {}) =>
  hintsOf(new Element('div', { class: className, ...attribs }));

describe('rule: class and id names are read as words', () => {
  test('names split at dashes, underscores, other punctuation and camelCase humps', () => {
    expect(wordsOf('l-article-body-segment')).toEqual(['l', 'article', 'body', 'segment']);
    expect(wordsOf('article__body--wide')).toEqual(['article', 'body', 'wide']);
    expect(wordsOf('articleBody')).toEqual(['article', 'body']);
    expect(wordsOf('ssrcss-1q0x1qg-Paragraph')).toEqual(['ssrcss', '1q0x1qg', 'paragraph']);
  });

  test('a content name outweighs a layout word on another name', () => {
    expect(hints('l-sidebar-fixed l-article-body-segment').boilerplate).toBeNull();
    expect(hints('article-body pagination-first').boilerplate).toBeNull();
    expect(hints('l-sidebar').boilerplate).toBe('strong');
    expect(hints('pagination').boilerplate).toBe('strong');
  });

  test('within one name the boilerplate word wins', () => {
    expect(hints('sidebar-content').boilerplate).toBe('strong');
    expect(hints('entry-meta').boilerplate).toBe('weak');
    expect(hints('article-footer').boilerplate).toBe('strong');
  });

  test('a thing wins over a content name on another name', () => {
    expect(hints('article comments').boilerplate).toBe('strong');
    expect(hints('post related-posts').thing).toBe(true);
  });

  test('words are words, not substrings across them: nav is not canvas, comment is not commentary', () => {
    expect(hints('canvas-wrap').boilerplate).toBeNull();
    expect(hints('commentary').boilerplate).toBeNull();
    expect(hints('commentlist').boilerplate).toBe('strong');
  });

  test('names of what an element has or does are not what it is (has-sidebar, share-enabled)', () => {
    expect(hints('post has-sidebar').boilerplate).toBeNull();
    expect(hints('story-body share-enabled').weight).toBe(25);
  });

  test('component names are read; an id of several words made from a heading is not', () => {
    expect(hintsOf(new Element('div', { 'data-component': 'byline-block' })).boilerplate).toBe('weak');
    const section = new Element('div', { id: 'sharing-with-others' });
    section.children.push(new Element('h2', {}));
    expect(hintsOf(section).boilerplate).toBeNull();
    const comments = new Element('div', { id: 'comments' });
    comments.children.push(new Element('h2', {}));
    expect(hintsOf(comments).boilerplate).toBe('strong');
  });
});
