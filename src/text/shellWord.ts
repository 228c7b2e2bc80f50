// A text as one word a POSIX shell reads back unchanged, for commands printed for the user to paste.

/** `text` single-quoted: a shell reads every character of it as is. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** `word` as is when nothing in it is special to a shell, else single-quoted (a masked URL's `***` would glob). */
export function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : shellQuote(word);
}
