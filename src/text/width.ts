// How many terminal columns a text takes: a table padded by String.length puts every column after a
// CJK name (two columns a character) or a decomposed accent (none for the mark) out of line.

const segmenter = new Intl.Segmenter();

/** East Asian Wide and Fullwidth (Hangul, CJK, kana, fullwidth forms) and emoji shown as emoji. */
const WIDE =
  /^(?:[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]|\p{Emoji_Presentation})/u;

/**
 * Characters a terminal shows as nothing (wcwidth 0) that the segmenter leaves as graphemes of their own: zero
 * width space, non-joiner and joiner, word joiner and the invisible operators, the byte order mark.
 */
const ZERO_WIDTH = /^[\u200b-\u200d\u2060-\u2064\ufeff]+$/;

/** Columns `text` takes on a terminal: one per character (a grapheme), two for a wide one, none for an invisible one. */
export function displayWidth(text: string): number {
  // Printable ASCII, the usual cell, needs no segmenting.
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  let width = 0;
  for (const { segment } of segmenter.segment(text))
    width += WIDE.test(segment) ? 2 : ZERO_WIDTH.test(segment) ? 0 : 1;
  return width;
}

/** `text` padded with spaces to `width` columns. */
export function padDisplay(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - displayWidth(text)));
}
