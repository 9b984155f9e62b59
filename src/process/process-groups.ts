/**
 * The registry of live process groups, and the few calls that signal them.
 *
 * Every step runs as the leader of its own process group (`detached: true`, so its pid is also the group id).
 * Signalling `-pgid` reaches the step and everything it forked that stayed in the group (`sh -c 'x & wait'`,
 * `terraform` provider plugins, `helm` hooks), which is what makes timeouts and cancellation stop a whole tree.
 * See setpgid(2) and kill(2): a negative pid addresses a process group.
 *
 * The registry exists so that the CLI can kill everything synchronously on a second SIGINT, when there is no
 * time left to await anything. It does not own the groups' lifecycles: `spawnStep` adds and removes entries.
 */

const liveGroups = new Set<number>();

/** Records a process group (its leader's pid) as live. Called by `spawnStep` right after the spawn. */
export function registerProcessGroup(pgid: number): void {
  liveGroups.add(pgid);
}

/** Forgets a process group once its step has finished and any kill has completed. */
export function unregisterProcessGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

/** The process group ids of the steps that are running now, in start order. */
export function liveProcessGroups(): number[] {
  return [...liveGroups];
}

/**
 * Sends `signal` to every process of group `pgid`. Returns false when the group no longer exists (ESRCH), and
 * also for any other refusal from the kernel (EPERM), since there is nothing more this process can do then.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether group `pgid` still has at least one process. A member that has exited but not yet been reaped (a
 * zombie) still counts, as kill(2) still accepts it; callers that wait on this must bound the wait.
 */
export function processGroupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    // EPERM means the group exists but is not ours to signal: it is alive all the same.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Sends `signal` (SIGKILL unless told otherwise) to every live process group, synchronously, and returns how
 * many groups were signalled. Meant for the last moments of the process: the second SIGINT, a fatal error.
 * The registry keeps its entries, since the steps' own code removes them when their processes are reaped.
 */
export function killAllProcessGroups(signal: NodeJS.Signals = 'SIGKILL'): number {
  let signalled = 0;
  for (const pgid of liveGroups) {
    if (signalProcessGroup(pgid, signal)) signalled++;
  }
  return signalled;
}
