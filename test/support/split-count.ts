/**
 * How many characters `String.prototype.split` is asked to search while `work` runs: a way to check that text is
 * cut into lines in time linear in what is written, without timing anything.
 */
export function charactersSplit(work: () => void): number {
  const split = Object.getOwnPropertyDescriptor(String.prototype, 'split')?.value as typeof String.prototype.split;
  let searched = 0;
  String.prototype.split = function (this: string, ...args: Parameters<typeof split>) {
    searched += this.length;
    return split.apply(this, args);
  } as typeof split;
  try {
    work();
  } finally {
    String.prototype.split = split;
  }
  return searched;
}
