/** Deepest bracket nesting (`{`, `[`, `(`) a document may have before it is parsed. */
export const MAX_NESTING = 64;

/**
 * The deepest nesting of `{ [ (` in a GraphQL document, outside strings, block strings and comments.
 * graphql-js parses recursively: a 10 kB document 2,000 levels deep overflows the stack (a 500), so
 * depth is counted by this flat scan before `parse` runs. Selection depth has its own, lower limit
 * after parsing (limits.ts); this one only keeps the parser safe.
 */
export function nestingDepth(doc: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < doc.length; i++) {
    const ch = doc[i];
    if (ch === "#") {
      while (i < doc.length && doc[i] !== "\n" && doc[i] !== "\r") i++;
    } else if (ch === '"') {
      if (doc.startsWith('"""', i)) {
        // A block string ends at the first `"""` not escaped as `\"""`.
        for (i += 3; i < doc.length && !doc.startsWith('"""', i); i++) if (doc.startsWith('\\"""', i)) i += 3;
        i += 2;
      } else {
        for (i++; i < doc.length && doc[i] !== '"' && doc[i] !== "\n"; i++) if (doc[i] === "\\") i++;
      }
    } else if (ch === "{" || ch === "[" || ch === "(") {
      if (++depth > max) max = depth;
    } else if (ch === "}" || ch === "]" || ch === ")") {
      depth = Math.max(0, depth - 1);
    }
  }
  return max;
}
