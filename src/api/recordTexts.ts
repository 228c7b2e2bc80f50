// Each record's raw JSON cut from the response text instead of written again with JSON.stringify (one
// of the largest costs of storing a record). The store keeps JSON.stringify's text of the parsed record,
// so a cut may stand in for it only when it is that very text: the body must be in JSON.stringify's own
// form (no whitespace, only the escapes it writes, numbers as JavaScript prints them, no index-like keys,
// which JavaScript objects list first). One thing this scan does not see is a key repeated in an object
// (the parsed record keeps one value): such a text is longer than the record's JSON, which the caller
// checks (sameLengthAsJson). The body has been parsed by JSON.parse already, so it is valid JSON: the
// scan only finds the elements of `data` and what JSON.stringify would write differently.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const NUMBER_CHAR = /[-+.0-9e]*/y;
const DATA_KEY = '"data"';

/** The body is not in JSON.stringify's form: the caller writes the texts itself. */
class NotCompact extends Error {}

function lowerHex(code: number): boolean {
  return (code >= DIGIT_0 && code <= DIGIT_9) || (code >= 0x61 && code <= 0x66);
}

/**
 * An escape at `at` as JSON.stringify writes it: \" \\ \b \f \n \r \t, or \u00XX (lowercase) for the
 * other control characters. Returns its length.
 */
function escapeLength(text: string, at: number): number {
  const next = text.charCodeAt(at + 1);
  if (next !== 0x75) {
    const short =
      next === QUOTE ||
      next === BACKSLASH ||
      next === 0x62 ||
      next === 0x66 ||
      next === 0x6e ||
      next === 0x72 ||
      next === 0x74;
    if (!short) throw new NotCompact();
    return 2;
  }
  const high = text.charCodeAt(at + 4);
  const low = text.charCodeAt(at + 5);
  if (text.charCodeAt(at + 2) !== DIGIT_0 || text.charCodeAt(at + 3) !== DIGIT_0) throw new NotCompact();
  if (!lowerHex(high) || !lowerHex(low) || high > 0x31) throw new NotCompact();
  const value = Number.parseInt(text.slice(at + 4, at + 6), 16);
  if (value === 0x08 || value === 0x09 || value === 0x0a || value === 0x0c || value === 0x0d)
    throw new NotCompact();
  return 6;
}

class Scanner {
  /** The next backslash at or after the last search (Infinity: none left). */
  private backslash = -1;

  constructor(private readonly text: string) {}

  /** The end of the string opening at `start` (past its closing quote). */
  stringEnd(start: number): number {
    const text = this.text;
    let at = start + 1;
    for (;;) {
      const quote = text.indexOf('"', at);
      if (this.backslash < at) {
        const next = text.indexOf("\\", at);
        this.backslash = next < 0 ? Number.POSITIVE_INFINITY : next;
      }
      if (this.backslash > quote) return quote + 1;
      at = this.backslash + escapeLength(text, this.backslash);
    }
  }

  numberEnd(start: number): number {
    NUMBER_CHAR.lastIndex = start;
    NUMBER_CHAR.test(this.text);
    const end = NUMBER_CHAR.lastIndex;
    const token = this.text.slice(start, end);
    if (String(Number(token)) !== token) throw new NotCompact();
    return end;
  }

  /** The texts of the elements of the top-level object's last `data` array (JSON.parse keeps the last). */
  dataTexts(): string[] | null {
    const text = this.text;
    let texts: string[] | null = null;
    let depth = 0;
    /** The depth just inside the `data` array being read (0: none). */
    let inData = 0;
    let elementStart = -1;
    let at = 0;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code === QUOTE) {
        const end = this.stringEnd(at);
        if (text.charCodeAt(end) === COLON) {
          // A key. One starting with a digit may be index-like: the parsed object lists those first.
          const first = text.charCodeAt(at + 1);
          if (first >= DIGIT_0 && first <= DIGIT_9) throw new NotCompact();
          const isData = depth === 1 && end - at === DATA_KEY.length && text.startsWith(DATA_KEY, at);
          at = end + 1;
          if (isData) {
            texts = text.charCodeAt(at) === 0x5b ? [] : null;
            inData = texts === null ? 0 : 2;
            elementStart = at + 1;
          }
          continue;
        }
        at = end;
        continue;
      }
      if (code === 0x7b || code === 0x5b) {
        depth += 1;
        at += 1;
        continue;
      }
      if (code === 0x7d || code === 0x5d) {
        if (depth === inData) {
          // The end of `data`: its last element, unless it is empty.
          if (at > elementStart) texts?.push(text.slice(elementStart, at));
          inData = 0;
        }
        depth -= 1;
        at += 1;
        continue;
      }
      if (code === COMMA) {
        if (depth === inData) {
          texts?.push(text.slice(elementStart, at));
          elementStart = at + 1;
        }
        at += 1;
        continue;
      }
      if (code === 0x2d || (code >= DIGIT_0 && code <= DIGIT_9)) at = this.numberEnd(at);
      // true, false, null (the body is valid JSON).
      else if (code === 0x74 || code === 0x6e) at += 4;
      else if (code === 0x66) at += 5;
      // Whitespace: not what JSON.stringify writes.
      else throw new NotCompact();
    }
    return texts;
  }
}

/**
 * The text of each element of `data` in `body` (a response text JSON.parse has read), as JSON.stringify
 * writes it, when there are `count`; null when the body is not in that form.
 */
export function recordTextsOf(body: string, count: number): string[] | null {
  try {
    const texts = new Scanner(body).dataTexts();
    return texts !== null && texts.length === count ? texts : null;
  } catch (error) {
    if (error instanceof NotCompact) return null;
    throw error;
  }
}

/**
 * A cut text stands for the record's JSON when it is as long as the record's canonical JSON (the same
 * members in another order): a repeated key makes the text longer than the parsed record's JSON.
 */
export function sameLengthAsJson(text: string | undefined, canonicalText: string): text is string {
  return text !== undefined && text.length === canonicalText.length;
}
