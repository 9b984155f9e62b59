/**
 * A project whose one kapp, `web:k`, is read from a file source (`library/k`, beside the project's manifests), for
 * tests of what kapps reads and writes in a kapp's directory.
 */
import { fixtureProject, type FixtureProject } from './project.js';

/** A step that records it ran (tag `ran`) and prints something, so capture files get content. */
export const fakeStep = (fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'apply',
  command: 'kapps-fake',
  args: '--tag ran --stdout hello',
  ...fields,
});

/** Project with kapp `web:k` read from `library/k` (a file source), given its sugarkube.yaml. */
export function libraryKapp(kappFile: Record<string, unknown>, files: Record<string, unknown> = {}): FixtureProject {
  return fixtureProject({
    manifests: { web: { kapps: [{ id: 'k', sources: [{ uri: '../library/k' }] }] } },
    files: { 'library/k/sugarkube.yaml': kappFile, ...files },
  });
}
