/** A kapp of an opened stack: where it comes from, where it lives in the workspace, its layered descriptor. */
import type { KappDescriptor, ManifestConfig } from '../config/types.js';
import type { GoMap } from '../go-value/value.js';
import type { ResolvedSource } from '../workspace/workspace.js';

export interface KappModel {
  /** `manifest:kapp`. */
  readonly id: string;
  readonly manifestId: string;
  readonly kappId: string;
  /** Position in stack order. */
  readonly index: number;
  readonly manifest: ManifestConfig;
  /** The manifest's entry for this kapp. */
  readonly entry: KappDescriptor & { id: string };
  /** `<workspace>/<manifest>/<kapp>`, absolute. */
  readonly cacheRoot: string;
  /** The kapp's sugarkube.yaml, when it has one. */
  readonly configFile?: string;
  /** Directory of sugarkube.yaml (base of relative template and output paths), else the cache root. */
  readonly configDir: string;
  readonly sources: readonly ResolvedSource[];
  /** All layers merged, unrendered. */
  readonly descriptor: KappDescriptor;
  /** Kapp vars files merged (lowest precedence of `.kapp.vars`). */
  readonly kappVarsFromFiles: GoMap;
  /** Ids of the outputs the kapp declares, in declaration order. */
  readonly outputIds: readonly string[];
}
