// A text as one word a POSIX shell reads back unchanged, for commands printed for the user to paste.

/** `word` as is when nothing in it is special to a shell, else single-quoted (a masked URL's `***` would glob). */
export function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
