// A strict, small XML reader for the JUnit output (no XML parser among the dependencies): it refuses
// anything not well-formed — unbalanced or mismatched tags, unquoted or repeated attributes, a bare `&`
// or `<` in text, characters XML 1.0 cannot carry, anything after the root — and returns the tree.
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_][\w.-]*/;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decode(text: string, at: number): string {
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(text))
    throw new Error(`forbidden character near ${at}`);
  if (text.includes("<")) throw new Error(`bare < near ${at}`);
  return text.replace(/&([^;]*);|&/g, (whole, name: string | undefined) => {
    const value = name === undefined ? undefined : ENTITIES[name];
    if (value === undefined) throw new Error(`bad entity ${whole} near ${at}`);
    return value;
  });
}

export function parseXml(source: string): XmlElement {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at ${i}: ${JSON.stringify(source.slice(i, i + 30))}`);
  };
  const skipSpace = () => {
    while (/\s/.test(source[i] ?? "")) i += 1;
  };
  const name = () => {
    const m = NAME.exec(source.slice(i));
    if (!m) fail("expected a name");
    i += m![0].length;
    return m![0];
  };
  const element = (): XmlElement => {
    if (source[i] !== "<") fail("expected <");
    i += 1;
    const el: XmlElement = { name: name(), attributes: {}, children: [], text: "" };
    for (;;) {
      const before = i;
      skipSpace();
      if (source.startsWith("/>", i)) {
        i += 2;
        return el;
      }
      if (source[i] === ">") {
        i += 1;
        break;
      }
      if (i === before) fail("expected a space before an attribute");
      const key = name();
      if (key in el.attributes) fail(`repeated attribute ${key}`);
      if (source[i] !== "=" || source[i + 1] !== '"') fail('expected ="');
      const end = source.indexOf('"', i + 2);
      if (end < 0) fail("unterminated attribute");
      el.attributes[key] = decode(source.slice(i + 2, end), i);
      i = end + 1;
    }
    for (;;) {
      const next = source.indexOf("<", i);
      if (next < 0) fail("unclosed element");
      el.text += decode(source.slice(i, next), i);
      i = next;
      if (source.startsWith("</", i)) {
        i += 2;
        if (name() !== el.name) fail(`mismatched close of ${el.name}`);
        skipSpace();
        if (source[i] !== ">") fail("expected >");
        i += 1;
        return el;
      }
      el.children.push(element());
    }
  };
  if (source.startsWith("<?xml")) {
    const end = source.indexOf("?>");
    if (end < 0) fail("unterminated declaration");
    i = end + 2;
  }
  skipSpace();
  const root = element();
  skipSpace();
  if (i !== source.length) fail("content after the root element");
  return root;
}
