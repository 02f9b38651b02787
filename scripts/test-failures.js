// Reads a vitest JSON report (written beside the default reporter by scripts/test-all.js)
// and names what failed: each failed test with the first lines of its error, and each
// file that failed without a failed test (an import error, a failing hook). The summary
// prints these last, so that the tail of a long run says what to look at.
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

const ERROR_LINES = 3;

/** The first lines of an error, without its stack frames. */
function firstLines(message) {
  return String(message ?? '')
    .split('\n')
    .filter((line) => !/^\s+at /.test(line) && line.trim() !== '')
    .slice(0, ERROR_LINES)
    .map((line) => `      ${line.slice(0, 300)}`);
}

/** Lines naming each failure in the report at `path`; one line saying so if it is missing or unreadable. */
export function failureLines(path) {
  if (!existsSync(path)) return ['    (no test report: the stage ended before vitest wrote one)'];
  let report;
  try {
    report = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return [`    (the test report could not be read: ${error.message})`];
  }
  const lines = [];
  for (const file of report.testResults ?? []) {
    const name = relative(process.cwd(), file.name);
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failedTests) {
      lines.push(`    ${name} > ${test.fullName}`, ...firstLines(test.failureMessages?.[0]));
    }
    if (failedTests.length === 0 && file.status === 'failed') lines.push(`    ${name} (the file failed)`, ...firstLines(file.message));
  }
  return lines.length > 0 ? lines : ['    (the report names no failed test: see the output above)'];
}
