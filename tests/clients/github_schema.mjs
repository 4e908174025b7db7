// Checks GraphQL documents against GitHub's published schema
// (@octokit/graphql-schema), with graphql-js's own validation: every field,
// argument and variable type as GitHub's API defines them.
// Usage: node github_schema.mjs < documents.json, where documents.json is
// [[name, document], ...]; prints one line per document and exits 1 when
// any is invalid. PARLEY_TEST_NODE_MODULES names the node_modules folder.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const modules = process.env.PARLEY_TEST_NODE_MODULES;
if (!modules) {
  console.error("PARLEY_TEST_NODE_MODULES is not set: run scripts/test, which installs the test tools");
  process.exit(2);
}
const require = createRequire(path.join(modules, "noop.js"));
const { buildClientSchema, parse, validate } = require("graphql");
// The introspection result GitHub publishes (its SDL carries directives
// graphql-js does not define).
const introspection = JSON.parse(readFileSync(path.join(modules, "@octokit/graphql-schema/schema.json"), "utf8"));
const schema = buildClientSchema(introspection.data ?? introspection);

const documents = JSON.parse(readFileSync(0, "utf8"));
let failed = false;
for (const [name, text] of documents) {
  let errors;
  try {
    errors = validate(schema, parse(text));
  } catch (error) {
    errors = [error];
  }
  if (errors.length === 0) {
    console.log(`valid: ${name}`);
  } else {
    failed = true;
    console.log(`INVALID: ${name}: ${errors.map((e) => e.message).join("; ")}`);
  }
}
process.exit(failed ? 1 : 0);
