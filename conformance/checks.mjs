// Summarizes one client scenario's results, as saved by the conformance suite
// with -o DIR (DIR/<scenario>-<timestamp>/checks.json and stderr.txt).
//
//   node conformance/checks.mjs SCENARIO DIR [expected-failures.yml]
//
// Prints one line: the verdict (PASS, WARN or FAIL, "expected" when the
// scenario is in the baseline), the counts, and for sse-retry the measured
// reconnect delay; then, for a scenario that did not pass, its failed or
// warned checks and the client's last stderr line.
//
// A scenario whose checks all pass still fails when the client exited with an
// error (or timed out) and the scenario does not allow that: the suite says so
// in DIR/suite.log ("CLIENT EXITED WITH ERROR", "CLIENT TIMED OUT").
//
// Exit status: 0 when the result is what the baseline says (a pass for a
// scenario not listed, a failure or warning for one listed), 1 for a failure
// or warning of a scenario not listed (no checks at all counts as a failure),
// 3 for a listed scenario that passes (the baseline is stale). Without a
// baseline file every failure and warning is unexpected.
import fs from 'node:fs';
import path from 'node:path';

const [scenario, dir, baselineFile] = process.argv.slice(2);
if (!scenario || !dir) {
  console.error('usage: node conformance/checks.mjs SCENARIO DIR [expected-failures.yml]');
  process.exit(64);
}

function find(root, name) {
  let entries;
  try {
    entries = fs.readdirSync(root, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const e of entries) {
    const p = path.join(root, e.name);
    if (e.isFile() && e.name === name) return p;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const p = find(path.join(root, e.name), name);
    if (p) return p;
  }
  return null;
}

// The baseline is a small YAML file; its client: list is all we read.
function baseline(file) {
  if (!file || !fs.existsSync(file)) return new Set();
  const names = new Set();
  let inClient = false;
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.replace(/#.*/, '').trimEnd();
    if (!line.trim()) continue;
    if (/^\S/.test(line)) {
      inClient = line.startsWith('client:');
      continue;
    }
    const m = inClient && line.match(/^\s+-\s+(\S+)$/);
    if (m) names.add(m[1].replace(/^['"]|['"]$/g, ''));
  }
  return names;
}

const checksFile = find(dir, 'checks.json');
const checks = checksFile ? JSON.parse(fs.readFileSync(checksFile, 'utf8')) : [];
const by = (s) => checks.filter((c) => c.status === s);
const passed = by('SUCCESS');
const failed = by('FAILURE');
const warned = by('WARNING');

const suiteLog = path.join(dir, 'suite.log');
const log = fs.existsSync(suiteLog) ? fs.readFileSync(suiteLog, 'utf8') : '';
const clientError = /CLIENT EXITED WITH ERROR|CLIENT TIMED OUT/.test(log);

let verdict = 'PASS';
if (failed.length > 0 || checks.length === 0 || clientError) verdict = 'FAIL';
else if (warned.length > 0) verdict = 'WARN';
// A scenario run at one protocol revision is named NAME@REVISION; the
// baseline may list NAME (every revision) or NAME@REVISION.
const listed = baseline(baselineFile);
const expected = listed.has(scenario) || listed.has(scenario.replace(/@.*$/, ''));
let code = 0;
if (verdict !== 'PASS' && !expected) code = 1;
if (verdict === 'PASS' && expected) code = 3;
let line = `${verdict.padEnd(4)} ${scenario.padEnd(42)} ${passed.length} passed, ${failed.length} failed, ${warned.length} warnings`;
if (checks.length === 0) line += ' (no results)';
if (clientError) line += '; the client exited with an error';
if (expected) line += verdict === 'PASS' ? ' (listed in the baseline: stale entry)' : ' (expected: in the baseline)';

const timing = checks.find((c) => c.id === 'client-sse-retry-timing');
if (timing?.details?.actualDelayMs !== undefined) {
  const d = timing.details;
  const window = d.maxAcceptableMs === undefined ? `at least ${d.minAcceptableMs}` : `${d.minAcceptableMs}-${d.maxAcceptableMs}`;
  line += `; reconnect after ${d.actualDelayMs} ms (retry: ${d.expectedRetryMs}, window ${window} ms)`;
}
console.log(line);

if (verdict !== 'PASS') {
  // A failure the baseline expects is explained there; show only why the
  // client stopped.
  for (const c of expected ? [] : [...failed, ...warned]) {
    console.log(`       ${c.status} ${c.id}: ${c.errorMessage || c.description}`);
  }
  const stderrFile = checksFile && path.join(path.dirname(checksFile), 'stderr.txt');
  if (stderrFile && fs.existsSync(stderrFile)) {
    const last = fs.readFileSync(stderrFile, 'utf8').trim().split('\n').filter((l) => l.startsWith('scenario '));
    if (last.length > 0) console.log(`       client: ${last[last.length - 1]}`);
  }
}
process.exit(code);
