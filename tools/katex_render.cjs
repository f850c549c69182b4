// Render TeX to HTML + MathML with KaTeX, at build time, so pages ship no math JavaScript.
// Protocol (used by tools/katex.py): one JSON request per stdin line,
//   {"tex": "...", "display": true|false}
// answered by one JSON line on stdout: {"html": "..."} or {"error": "..."}.
"use strict";
const katex = require("katex");
const readline = require("readline");

const macros = {}; // shared across formulas of a build, like a LaTeX document preamble
const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  let reply;
  try {
    const { tex, display } = JSON.parse(line);
    const html = katex.renderToString(tex, {
      displayMode: Boolean(display),
      throwOnError: true, // a formula KaTeX cannot parse fails the build, with its message
      strict: "error",
      trust: false,
      output: "htmlAndMathml", // MathML for screen readers, HTML for identical looks everywhere
      macros,
    });
    reply = { html };
  } catch (err) {
    reply = { error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
