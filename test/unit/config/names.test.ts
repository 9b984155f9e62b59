import { describe, expect, it } from 'vitest';
import { nameProblem } from '../../../src/config/names.js';

describe('names that become directories', () => {
  it('keeps every ordinary Sugarkube name valid', () => {
    for (const name of ['web', 'wordpress-sites', 'site_1', 'local.standard', 'a..b', 'v1.2', 'K8s']) {
      expect(nameProblem(name), name).toBeUndefined();
    }
  });

  it('refuses names that are not one path component, or could read as an option', () => {
    expect(nameProblem('')).toBe('is empty');
    expect(nameProblem('.')).toBe('is `.`');
    expect(nameProblem('..')).toBe('is `..`');
    expect(nameProblem('../../x')).toBe('contains `/`');
    expect(nameProblem('/etc')).toBe('contains `/`');
    expect(nameProblem('..\\x')).toBe('contains `\\`');
    expect(nameProblem('a\u0000b')).toBe('contains a control character');
    expect(nameProblem('a\nb')).toBe('contains a control character');
    expect(nameProblem('-rf')).toBe('starts with `-`');
  });
});
