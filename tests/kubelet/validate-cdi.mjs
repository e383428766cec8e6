#!/usr/bin/env node
// Validates CDI spec files against tests/kubelet/cdi-schema.json with ajv (tests/validate's
// node_modules), an independent check of what the kubelet plugin writes.
//   node validate-cdi.mjs FILE...   -> exit 0 when every file is valid, 1 with the reasons
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../validate/package.json"));
const Ajv = require("ajv");
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(here, "cdi-schema.json"), "utf8")));
let bad = 0;
for (const file of process.argv.slice(2)) {
  let doc;
  try {
    doc = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    console.error(`${file}: not JSON: ${e.message}`);
    bad++;
    continue;
  }
  if (!validate(doc)) {
    console.error(`${file}: ${ajv.errorsText(validate.errors)}`);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
