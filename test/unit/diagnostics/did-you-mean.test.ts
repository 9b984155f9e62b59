import { describe, expect, it } from 'vitest';
import { closestMatch, didYouMean, editDistance } from '../../../src/diagnostics/did-you-mean.js';

describe('did you mean', () => {
  it('counts a swap of two neighbouring letters as one edit', () => {
    expect(editDistance('dve', 'dev')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('suggests within a third of the word, at least one edit, ignoring case', () => {
    expect(closestMatch('dve', ['defaults', 'dev', 'prod'])).toBe('dev');
    expect(closestMatch('Manifest1:kappA', ['manifest1:kappA'])).toBe('manifest1:kappA');
    expect(closestMatch('log_levle', ['log_level'])).toBe('log_level');
    expect(closestMatch('abc', ['xyz'])).toBeUndefined();
    expect(closestMatch('same', ['same'])).toBeUndefined();
  });

  it('words every suggestion the same way', () => {
    expect(didYouMean('parms', ['params'])).toBe("did you mean 'params'?");
    expect(didYouMean('zzzz', ['params'])).toBeUndefined();
  });
});
