// Render TeX at build time, so pages ship no math JavaScript (driven by tools/formulas.py).
// Usage: node render_formulas.cjs [OUTPUT]
//   mathml        MathML Core, written by Temml (a KaTeX fork that keeps only MathML) [default]
//   katex-html    KaTeX's HTML and a MathML copy for screen readers
//   katex-mathml  KaTeX's MathML alone
// Protocol: one JSON request per stdin line, {"tex": "...", "display": true|false},
// answered by one JSON line on stdout: {"html": "..."} or {"error": "..."}.
// Every output is wrapped like KaTeX's: <span class="katex">, inside
// <span class="katex-display"> for display formulas; stylesheets and tests rely on it.
"use strict";
const readline = require("readline");

const output = process.argv[2] || "mathml";
const macros = {}; // shared across formulas of a build, like a LaTeX document preamble

function render(tex, display) {
  if (output === "mathml") {
    const math = require("temml").renderToString(tex, {
      displayMode: display,
      throwOnError: true, // a formula Temml cannot parse fails the build, with its message
      strict: true,
      trust: false,
      macros,
    });
    const formula = `<span class="katex">${math}</span>`;
    return display ? `<span class="katex-display">${formula}</span>` : formula;
  }
  return require("katex").renderToString(tex, {
    displayMode: display,
    throwOnError: true,
    strict: "error",
    trust: false,
    output: output === "katex-html" ? "htmlAndMathml" : "mathml",
    macros,
  });
}

if (!["mathml", "katex-html", "katex-mathml"].includes(output)) {
  process.stderr.write(`unknown output ${output}\n`);
  process.exit(2);
}
const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  let reply;
  try {
    const { tex, display } = JSON.parse(line);
    reply = { html: render(tex, Boolean(display)) };
  } catch (err) {
    reply = { error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
