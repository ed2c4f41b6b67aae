// node gltf_validate.js LIST: run the Khronos glTF-Validator (npm gltf-validator, found through
// NODE_PATH) on every file named in LIST (one path a line). Prints every error and warning
// with its file, a count of the informational codes, and a summary line
// "validated N files: E errors, W warnings, I infos"; exits 1 when any file has an error or
// cannot be read.
'use strict';
const fs = require('fs');
const validator = require('gltf-validator');

async function main() {
  const files = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter((f) => f);
  const infos = new Map();
  let errors = 0, warnings = 0, infoCount = 0, bad = 0;
  for (const f of files) {
    let report;
    try {
      report = await validator.validateBytes(new Uint8Array(fs.readFileSync(f)),
          {uri: f, maxIssues: 0, writeTimestamp: false});
    } catch (e) {
      console.log(`UNREADABLE ${f}: ${e}`);
      bad++;
      continue;
    }
    const is = report.issues;
    errors += is.numErrors;
    warnings += is.numWarnings;
    infoCount += is.numInfos;
    if (is.numErrors) bad++;
    for (const m of is.messages) {
      if (m.severity <= 1)
        console.log(`${m.severity ? 'WARNING' : 'ERROR'} ${f} ${m.code} ${m.pointer || ''} ${m.message}`);
      else
        infos.set(m.code, (infos.get(m.code) || 0) + 1);
    }
  }
  for (const [code, n] of [...infos].sort())
    console.log(`info ${code}: ${n}`);
  console.log(`validated ${files.length} files: ${errors} errors, ${warnings} warnings, ${infoCount} infos`);
  process.exit(bad ? 1 : 0);
}
main();
