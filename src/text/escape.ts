// Making untrusted text (entity names, change logs, people's names, a user's query results) safe to
// show. Neutral: the `sql` command's table and the report's Markdown and CSV writers all use it.

/** = + - @ tab CR, as character codes: every CSV field is tested, most of them text. */
const FORMULA_START = new Set([0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d]);

/**
 * A spreadsheet evaluates a cell starting with = + - @ (or tab/CR before them) as a formula; prefixing
 * a single quote makes it text (OWASP "CSV injection"). Only strings are touched, never numbers.
 */
export function neutraliseFormula<T>(value: T): T | string {
  return typeof value === "string" && FORMULA_START.has(value.charCodeAt(0)) ? `'${value}` : value;
}

/**
 * Characters a terminal or a renderer acts on instead of showing: C0 controls (U+0000–U+001F: NUL, BEL,
 * BS, ESC…), DEL (U+007F), C1 controls (U+0080–U+009F, e.g. U+009B, a one-character CSI), the Unicode
 * line/paragraph separators (U+2028, U+2029) and the bidirectional controls that reorder what a reader
 * sees (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). The backslash is matched too: it is the
 * escape character, so it is doubled and every escape stays unambiguous.
 */
const UNSAFE = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Readonly<Record<string, string>> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

export interface EscapeControlsOptions {
  /**
   * Characters to pass through untouched, e.g. "\n\r" for a writer that turns line breaks into its own
   * markup (Markdown `<br>`). Only characters of the set above are affected by this.
   */
  keep?: string;
}

/**
 * `text` with every control character written visibly, so a hostile value cannot move the cursor,
 * recolour, clear or retitle a terminal, ring its bell, or hide text: `\n`, `\r`, `\t` and `\\` for
 * newline, carriage return, tab and backslash, `\uXXXX` (four lowercase hex digits, as in JSON) for the
 * others: ESC → `\u001b`, BEL → `\u0007`, NUL → `\u0000`. Reversible: a backslash in the output always
 * starts an escape. Printable text, including all other non-ASCII, is unchanged.
 */
export function escapeControls(text: string, options: EscapeControlsOptions = {}): string {
  const keep = options.keep ?? "";
  return text.replace(UNSAFE, (c) => {
    if (keep.includes(c)) return c;
    return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}
