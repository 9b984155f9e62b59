/**
 * Discovery of provider-vars and kapp-vars files: Sugarkube's "precedence walk" (§5.3). In each directory only
 * entries whose name without its extension is one of the accepted names are considered, ordered by the position of
 * that name (files before directories for the same name; same-named files by extension), all files of a directory
 * before its sub-directories, depth first. Files found later have higher precedence. Only `.yaml` files (any case)
 * are read.
 *
 * Directory listings are cached per walker, so walking the same tree for 10,000 kapps reads each directory once.
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';

interface Entry {
  readonly name: string;
  readonly base: string;
  readonly ext: string;
  readonly isDir: boolean;
}

/** Walks directory trees, caching listings (create one per command run). */
export class VarFileWalker {
  readonly #listings = new Map<string, readonly Entry[]>();

  #list(dir: string): readonly Entry[] {
    let entries = this.#listings.get(dir);
    if (!entries) {
      let dirents: Dirent[];
      try {
        dirents = readdirSync(dir, { withFileTypes: true });
      } catch {
        dirents = [];
      }
      entries = dirents.map((d) => {
        const ext = path.extname(d.name);
        let isDir = d.isDirectory();
        if (d.isSymbolicLink()) {
          try {
            isDir = statSync(path.join(dir, d.name)).isDirectory();
          } catch {
            isDir = false;
          }
        }
        return { name: d.name, base: ext ? d.name.slice(0, -ext.length) : d.name, ext, isDir };
      });
      this.#listings.set(dir, entries);
    }
    return entries;
  }

  /**
   * Visit `root` with the accepted `names` (duplicates ignored, first kept) and return the `.yaml` files in visit
   * order (lowest precedence first).
   */
  walk(root: string, names: readonly string[]): string[] {
    const rank = new Map<string, number>();
    for (const n of names) if (!rank.has(n)) rank.set(n, rank.size);
    const out: string[] = [];
    const visit = (dir: string): void => {
      const considered = this.#list(dir).filter((e) => rank.has(e.base));
      const byRank = (a: Entry, b: Entry): number =>
        (rank.get(a.base) as number) - (rank.get(b.base) as number) || (a.ext < b.ext ? -1 : a.ext > b.ext ? 1 : 0);
      const files = considered.filter((e) => !e.isDir).sort(byRank);
      const dirs = considered.filter((e) => e.isDir).sort(byRank);
      for (const f of files) if (f.ext.toLowerCase() === '.yaml') out.push(path.join(dir, f.name));
      for (const d of dirs) visit(path.join(dir, d.name));
    };
    visit(root);
    return out;
  }
}

/** The names accepted when walking provider-vars directories (§5.3). */
export function providerVarNames(stack: {
  provider: string;
  provisioner: string;
  account: string;
  profile: string;
  cluster: string;
  region: string;
}): string[] {
  const names = [
    'values',
    stack.provider,
    stack.provisioner,
    stack.account,
    stack.profile,
    stack.cluster,
    stack.region,
  ];
  if (stack.provider === 'aws') names.push('accounts');
  names.push('profiles', 'clusters');
  return names;
}

/** The names accepted when walking kapp-vars directories for one kapp (§5.3; sources in declaration order). */
export function kappVarNames(
  kappId: string,
  stack: {
    name: string;
    provider: string;
    provisioner: string;
    account: string;
    region: string;
    profile: string;
    cluster: string;
  },
  sourceIds: readonly { id: string; fqId?: string }[],
): string[] {
  const names = [
    kappId,
    'values',
    stack.name,
    stack.provider,
    stack.provisioner,
    stack.account,
    stack.region,
    stack.profile,
    stack.cluster,
    'profiles',
    'clusters',
  ];
  for (const s of sourceIds) {
    names.push(s.id);
    if (s.fqId) names.push(s.fqId);
  }
  return names;
}
