/**
 * Test helpers for process trees: where the fake commands are; the process helpers themselves live in
 * `test/support/processes.ts` and are re-exported here for the tests of this folder.
 */
import { FIXTURE_BIN } from '../../support/project.js';

export { FIXTURE_BIN };
export { markedSleepSeconds, survivors, waitForProcess } from '../../support/processes.js';

/** A PATH with the fake commands first, then the usual system directories. */
export const FIXTURE_PATH = `${FIXTURE_BIN}:/usr/local/bin:/usr/bin:/bin`;
