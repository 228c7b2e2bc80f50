// Control characters in untrusted text (names, change logs) made visible before text output: a raw ESC
// can drive a terminal (colours, cursor moves, title changes, hiding what came before), BEL rings, BS
// and DEL overwrite what was shown, NUL truncates in some viewers. Each becomes `\u001b`-style text, so
// a reader sees that it was there. CSV keeps the data as it is; only text meant for reading is escaped.

/**
 * C0 controls except tab and the line breaks (each output format decides how it breaks lines: the
 * Markdown turns them into `<br>`), DEL, and the C1 controls U+0080–U+009F (U+009B is a one-byte CSI
 * to terminals that take 8-bit controls).
 */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/** Replaces each control character with `\u` and its four hex digits (lower case), e.g. ESC → `\u001b`. */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
