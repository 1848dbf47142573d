/**
 * A YAML stream cut into the pieces kubectl decodes, as `kubectl apply -f` cuts it (k8s.io/apimachinery v0.36.3
 * `pkg/util/yaml`: `YAMLToJSONDecoder` over `YAMLReader` and `LineReader`, under cli-runtime's `StreamVisitor`):
 * - the text is read line by line at LF (bufio `ReadLine`: a CR right before the LF is dropped, a lone CR is not a
 *   line end there);
 * - a line that starts with `---` ends the piece when what follows it, trimmed of Go's white space, is empty or
 *   starts with `#` (`---#x: y` is a separator, `--- # c` too, and the whole line is dropped, comment and all); any
 *   other text after `---` (`--- {a: 1}`, `----`) is an error that ends the stream: kubectl reads nothing after it,
 *   and the piece it was in is lost too;
 * - each piece goes to sigs.k8s.io/yaml, which reads its first YAML document only: a document after `...` in the same
 *   piece is never read. go-yaml's reader takes a lone CR as a line break (scannerc.go `is_break`), so the piece is
 *   given to the YAML 1.2 parser with every line end written as LF.
 * A byte-order mark that opens the file stays in its first line for kubectl (its BOM transform keeps it), so that line
 * is no separator; go-yaml then skips the mark.
 */

/** One piece of the stream, to be read as one document. */
export interface StreamPiece {
  /** The piece as go-yaml reads it, every line end written as LF. */
  readonly text: string;
  /** The 1-based line the piece starts at (a lone CR counts as a line end, as go-yaml and editors count it). */
  readonly line: number;
}

export interface StreamSplit {
  readonly pieces: readonly StreamPiece[];
  /** The line that ends kubectl's reading of the stream, and why. */
  readonly error?: { readonly line: number; readonly message: string };
}

/** Go's `unicode.IsSpace`, which `strings.TrimSpace` trims. */
const GO_SPACE = "[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const GO_TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, "g");

/** `strings.TrimSpace`. */
export function goTrimSpace(s: string): string {
  return s.replace(GO_TRIM, "");
}

/** A line's text with its line end, as go-yaml reads it: CRLF and lone CR as LF. */
function asRead(content: string): string {
  return `${content}\n`.replace(/\r\n?/g, "\n");
}

/** The line ends in text already written as LF. */
function breaks(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Cuts `source` (the file's text, without a leading byte-order mark) into the pieces kubectl decodes;
 * `leadingBom` says the file opened with one.
 */
export function splitKubeStream(source: string, leadingBom = false): StreamSplit {
  const pieces: StreamPiece[] = [];
  let buffer: string[] = [];
  let bufferLine = 1;
  let line = 1;
  let first = true;
  const flush = () => {
    if (buffer.length > 0) pieces.push({ text: buffer.join(""), line: bufferLine });
    buffer = [];
  };
  for (let pos = 0; pos < source.length; ) {
    const nl = source.indexOf("\n", pos);
    let content = source.slice(pos, nl === -1 ? source.length : nl);
    if (nl !== -1 && content.endsWith("\r")) content = content.slice(0, -1);
    pos = nl === -1 ? source.length : nl + 1;
    const read = asRead(content);
    const separator = content.startsWith("---") && !(first && leadingBom);
    first = false;
    if (separator) {
      const rest = goTrimSpace(content.slice(3));
      if (rest !== "" && !rest.startsWith("#"))
        return {
          pieces,
          error: {
            line,
            message: `invalid Yaml document separator: ${rest} (kubectl reads only comments after "---", and reads nothing of the stream from here on, nor the document before this line)`,
          },
        };
      flush();
    } else {
      if (buffer.length === 0) bufferLine = line;
      buffer.push(read);
    }
    line += breaks(read);
  }
  flush();
  return { pieces };
}
