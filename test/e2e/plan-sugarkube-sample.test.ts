/**
 * A project built like Sugarkube's sample project (stack `local-web`, the default sugarkube-conf.yaml, the real
 * kapps' sugarkube.yaml files in a workspace) plans as Sugarkube would run it: which kapps are processed, whose
 * conditions fail, the dependencies, and the steps of each phase with their arguments.
 */
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { kapps, type GeneratedSpec } from '../fixtures/plan/project.js';

const SAMPLE = fileURLToPath(new URL('../fixtures/sugarkube-sample', import.meta.url));
const WS = path.join(SAMPLE, 'workspace');
// --no-actions: the warnings about the actions kapps does not run are tested in first-hour.test.ts.
const ARGS = ['stacks/web.yaml', 'local-web', 'workspace', '--no-actions'];
const bin = mkdtempSync(path.join(os.tmpdir(), 'kapps-sample-bin-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

async function spec(): Promise<GeneratedSpec> {
  const r = await kapps(SAMPLE, ['generate', ...ARGS, '-o', 'json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as GeneratedSpec;
}

/** `name(priority)` of each step of each phase that has steps. */
function outline(s: GeneratedSpec): string[] {
  return s.kapps.flatMap((k) => [
    `${k.id}${k.conditionsOk ? '' : ' (conditions failed)'} <- ${k.dependsOn.join(', ') || '-'}`,
    ...Object.entries(k.phases)
      .filter(([, steps]) => steps.length > 0)
      .map(([phase, steps]) => `  ${phase}: ${steps.map((x) => `${x.name}(${String(x.mergePriority)})`).join(', ')}`),
  ]);
}

function stepOf(s: GeneratedSpec, kappId: string, phase: string, name: string) {
  const step = s.kapps.find((k) => k.id === kappId)?.phases[phase]?.find((x) => x.name === name);
  if (!step) throw new Error(`no step ${name} in ${kappId} ${phase}`);
  return step;
}

describe('the sample project, stack local-web', () => {
  it('generates a plan without errors or warnings: the DAG, conditions and steps of every kapp', async () => {
    expect(outline(await spec())).toEqual([
      'prelaunch:terraform-bucket (conditions failed) <- -',
      'prelaunch:public-hosted-zone (conditions failed) <- prelaunch:terraform-bucket',
      '  clean: delete-generated-files(255), delete-generated-dirs(255)',
      'prelaunch:no-op <- prelaunch:public-hosted-zone',
      '  clean: delete-generated-files(255), delete-generated-dirs(255)',
      'bootstrap:tiller <- prelaunch:no-op',
      '  plan_install: replace-default(255)',
      '  apply_install: install RBAC(255), install tiller(255)',
      '  apply_delete: uninstall tiller(255), delete service account role binding(255), delete service account(255)',
      '  clean: delete-generated-files(255), delete-generated-dirs(255)',
      'bootstrap:cert-manager <- bootstrap:tiller',
      '  plan_install: helm-lint(255)',
      '  apply_install: install CRDs(20), create namespace(25), helm-install(30)',
      '  apply_delete: helm-delete(10), delete namespace(15), delete CRDs(20)',
      '  clean: delete-generated-files(255), delete-generated-dirs(255)',
      'bootstrap:nginx1 <- bootstrap:cert-manager',
      '  plan_install: helm-lint(255)',
      '  apply_install: helm-install(30)',
      '  apply_delete: helm-delete(10), delete namespace(15)',
      '  clean: delete-generated-files(255), delete-generated-dirs(255)',
      'wordpress:site1 <- bootstrap:nginx1',
      '  plan_install: helm-lint(255)',
      '  apply_install: helm-install(30), install fixtures(255)',
      '  apply_delete: helm-delete(10), delete namespace(15)',
      '  clean: delete-generated-files(255), delete-generated-dirs(255)',
      'wordpress:site2 (conditions failed) <- bootstrap:nginx1',
      '  plan_install: helm-lint(255)',
      '  apply_install: helm-install(30), install fixtures(255)',
      '  apply_delete: helm-delete(10), delete namespace(15)',
      '  clean: delete-generated-files(255), delete-generated-dirs(255)',
    ]);
  });

  it("renders cert-manager's own helm unit (CRDs, namespace, chart) with its template's path and values files", async () => {
    const s = await spec();
    const root = path.join(WS, 'bootstrap/cert-manager/cert-manager');
    expect(s.kapps.find((k) => k.id === 'bootstrap:cert-manager')?.phases.apply_install).toEqual([
      {
        name: 'install CRDs',
        unit: 'helm',
        command: 'kubectl',
        args: ['--context=minikube', 'apply', '-f=./k8s/00-crds.yaml'],
        env: { KUBECONFIG: '' },
        workingDir: root,
        expectedExitCode: 0,
        ignoreErrors: false,
        loadOutputs: false,
        mergePriority: 20,
      },
      {
        name: 'create namespace',
        unit: 'helm',
        command: 'kubectl',
        args: ['--context=minikube', 'apply', `-f=${root}/k8s/_generated_namespace.yaml`],
        env: { KUBECONFIG: '' },
        workingDir: root,
        expectedExitCode: 0,
        ignoreErrors: false,
        loadOutputs: false,
        mergePriority: 25,
      },
      {
        name: 'helm-install',
        unit: 'helm',
        command: 'helm',
        args: [
          'upgrade',
          '--kube-context=minikube',
          '--tiller-namespace=kube-system',
          '--wait',
          '--install',
          '--recreate-pods',
          '--timeout=600',
          '--namespace=cert-manager',
          'cert-manager',
          '.',
          `-f=${root}/values.yaml`,
        ],
        env: { KUBECONFIG: '' },
        workingDir: root,
        expectedExitCode: 0,
        ignoreErrors: false,
        loadOutputs: false,
        mergePriority: 30,
      },
    ]);
  });

  it('layers stack defaults over program vars, main_kapp_dir from the manifest, values-<provider>.yaml from defaultVars', async () => {
    const s = await spec();
    const nginx = stepOf(s, 'bootstrap:nginx1', 'apply_install', 'helm-install');
    expect(nginx.workingDir).toBe(path.join(WS, 'bootstrap/nginx1/nginx-ingress'));
    expect(nginx.args).toEqual([
      'upgrade',
      '--kube-context=minikube',
      '--tiller-namespace=kube-system',
      '--wait',
      '--install',
      '--recreate-pods',
      '--timeout=1200',
      '--namespace=nginx1',
      'nginx1',
      '.',
      `-f=${path.join(WS, 'bootstrap/nginx1/nginx-ingress/values.yaml')}`,
    ]);
    const site1 = path.join(WS, 'wordpress/site1');
    expect(stepOf(s, 'wordpress:site1', 'apply_install', 'helm-install').args.slice(-4)).toEqual([
      'site1',
      '.',
      `-f=${site1}/wordpress/values.yaml`,
      `-f=${site1}/wordpress/values-local.yaml`,
    ]);
    expect(stepOf(s, 'wordpress:site1', 'apply_install', 'install fixtures')).toMatchObject({
      command: `${site1}/wordpress/install-fixtures.sh`,
      env: {
        KUBECONFIG: '',
        KUBE_CONTEXT: 'minikube',
        NAMESPACE: 'wordpress-site1',
        KUBECTL: 'kubectl',
        KAPP_ROOT: site1,
        RELEASE: 'site1',
        PROVIDER: 'local',
      },
      conditions: ['true'],
    });
    expect(stepOf(s, 'bootstrap:tiller', 'apply_install', 'install RBAC').args).toEqual([
      '--context=minikube',
      '--namespace=kube-system',
      'apply',
      `-f=${path.join(WS, 'bootstrap/tiller/tiller/k8s/_generated_rbac.yaml')}`,
    ]);
    expect(stepOf(s, 'bootstrap:tiller', 'apply_delete', 'delete service account').args).toEqual([
      '--context=minikube',
      '--namespace=kube-system',
      'delete',
      'ServiceAccount',
      'tiller',
    ]);
  });

  it('prints the DAG Sugarkube prints, with conditional dependencies resolved', async () => {
    const r = await kapps(SAMPLE, ['graph', ...ARGS]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      [
        'Created the following DAG. Only nodes marked with a * will be processed:',
        '    prelaunch:terraform-bucket (conditions failed) - depends on: <nothing>',
        '    prelaunch:public-hosted-zone (conditions failed) - depends on: prelaunch:terraform-bucket',
        '  * prelaunch:no-op - depends on: prelaunch:public-hosted-zone',
        '  * bootstrap:tiller - depends on: prelaunch:no-op',
        '  * bootstrap:cert-manager - depends on: bootstrap:tiller',
        '  * bootstrap:nginx1 - depends on: bootstrap:cert-manager',
        '  * wordpress:site1 - depends on: bootstrap:nginx1',
        '    wordpress:site2 (conditions failed) - depends on: bootstrap:nginx1',
        '',
      ].join('\n'),
    );
  });

  it("shows nginx1's variables: provider vars rendered, outputs of cert-manager not produced yet", async () => {
    const r = await kapps(SAMPLE, ['vars', ...ARGS, '-i', 'bootstrap:nginx1', '-o', 'json']);
    expect(r.stderr).toBe('');
    const nginx = (JSON.parse(r.stdout) as { id: string; variables: Record<string, unknown> }[]).find(
      (x) => x.id === 'bootstrap:nginx1',
    );
    expect(nginx?.variables).toMatchObject({
      project: 'demo',
      root_hosted_zone: 'localhost',
      cluster_name: 'localhost',
      cluster_hosted_zone: 'localhost',
      kube_context: 'minikube',
      provisioner: { params: { start: { bootstrapper: 'kubeadm', memory: 4096, cpus: 4, disk_size: '50g' } } },
      outputs: {
        cert_manager: { clusterIssuer: {} },
        bootstrap__cert_manager: { clusterIssuer: {} },
        this: { lb_hostname: {} },
      },
      kapp: {
        vars: {
          cert_manager_kind: '<no value>',
          helm_timeout: 1200,
          ingress_class: 'nginx1',
          main_kapp_dir: 'nginx-ingress',
          namespace: 'nginx1',
          run_helm: true,
        },
      },
    });
  });

  it('validates: every command of the processed kapps is found', async () => {
    for (const name of ['helm', 'kubectl', 'echo', 'find']) {
      writeFileSync(path.join(bin, name), '#!/bin/sh\n');
      chmodSync(path.join(bin, name), 0o755);
    }
    const r = await kapps(SAMPLE, ['validate', ...ARGS], { PATH: bin });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      [
        '* prelaunch:no-op',
        '* bootstrap:tiller requires: kubectl, helm',
        '* bootstrap:cert-manager requires: kubectl, helm',
        '* bootstrap:nginx1 requires: helm, script',
        '* wordpress:site1 requires: terraform, helm, fixtures',
        '',
        'All 5 kapp(s) validated: every phase plans and every command was found',
        '',
      ].join('\n'),
    );
    expect(r.code).toBe(0);
  });
});
