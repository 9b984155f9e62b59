/**
 * The variable map templates are rendered against (Sugarkube §5.1), assembled from fragments merged in order:
 *
 *   stack intrinsics (.stack.*) < .sugarkube.* < provider vars < stack `vars` < registry (.kubeconfig, .outputs.*)
 *     < kapp (.kapp.*, and the kapp's own view of .outputs)
 *
 * and then rendered to a fixed point (`renderVariables`).
 */
import type { StackConfig } from '../config/types.js';
import { newGoMap, type GoMap } from '../go-value/value.js';
import { mergeAll } from './merge.js';

/** The `.stack.*` fragment. */
export function stackIntrinsics(stack: StackConfig): GoMap {
  return newGoMap([
    [
      'stack',
      newGoMap([
        ['name', stack.name],
        ['filePath', stack.file],
        ['provider', stack.provider],
        ['provisioner', stack.provisioner],
        ['account', stack.account],
        ['region', stack.region],
        ['profile', stack.profile],
        ['cluster', stack.cluster],
      ]),
    ],
  ]);
}

/** `.sugarkube.defaultVars`: provider, provisioner, account, profile, cluster, region (blanks kept). */
export function defaultVars(stack: StackConfig): string[] {
  return [stack.provider, stack.provisioner, stack.account, stack.profile, stack.cluster, stack.region];
}

/** Extras visible while run steps are computed: `.sugarkube.action` and `.sugarkube.dry-run`. */
export interface StepExtras {
  readonly action: string;
  readonly dryRun: boolean;
}

/** The kapp part of the map (`.kapp.*`). */
export interface KappVariables {
  readonly id: string;
  readonly manifestId: string;
  /** Absolute path of the kapp's directory in the workspace. */
  readonly cacheRoot: string;
  /** Kapp vars files merged with the descriptor's `vars`. */
  readonly vars: GoMap;
  /** `.kapp.templates.<id>`: `{source, dest, rendered_path, sensitive}`. */
  readonly templates: GoMap;
}

export interface VariableInputs {
  readonly stack: StackConfig;
  /**
   * `stackVariables(stack, providerVars)` computed once and shared by every kapp of the stack (used when there are
   * no extras); saves re-merging the stack-wide fragments for each kapp.
   */
  readonly base?: GoMap;
  /** Merged provider vars files (top level of the map). */
  readonly providerVars: GoMap;
  /** `.kubeconfig`: $KUBECONFIG, or "". */
  readonly kubeconfig: string;
  readonly kapp?: KappVariables;
  /** The kapp's view of outputs (`this`, short and fully-qualified keys); data, never re-rendered. */
  readonly outputs?: GoMap;
  readonly extras?: StepExtras;
}

function sugarkubeFragment(stack: StackConfig, extras: StepExtras | undefined): GoMap {
  const sugarkube = newGoMap([['defaultVars', defaultVars(stack)]]);
  if (extras) {
    sugarkube.action = extras.action;
    sugarkube['dry-run'] = extras.dryRun;
  }
  return newGoMap([['sugarkube', sugarkube]]);
}

/** The stack-wide fragments merged (`.stack`, `.sugarkube` without extras, provider vars, stack vars), unrendered. */
export function stackVariables(stack: StackConfig, providerVars: GoMap): GoMap {
  return mergeAll([stackIntrinsics(stack), sugarkubeFragment(stack, undefined), providerVars, stack.vars]);
}

/** Assemble the (unrendered) variable map. */
export function assembleVariables(inputs: VariableInputs): GoMap {
  const base =
    inputs.base && !inputs.extras
      ? inputs.base
      : mergeAll([
          stackIntrinsics(inputs.stack),
          sugarkubeFragment(inputs.stack, inputs.extras),
          inputs.providerVars,
          inputs.stack.vars,
        ]);
  const registry = newGoMap([
    ['kubeconfig', inputs.kubeconfig],
    ['outputs', inputs.outputs ?? newGoMap()],
  ]);
  const kapp = inputs.kapp
    ? newGoMap([
        [
          'kapp',
          newGoMap([
            ['id', inputs.kapp.id],
            ['manifestId', inputs.kapp.manifestId],
            ['cacheRoot', inputs.kapp.cacheRoot],
            ['vars', inputs.kapp.vars],
            ['templates', inputs.kapp.templates],
          ]),
        ],
      ])
    : undefined;
  return mergeAll([base, registry, kapp]);
}
