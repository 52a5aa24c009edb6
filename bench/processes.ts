/**
 * Child processes for the benchmarks, run as they are deployed: each service in a Node process of its own
 * (TypeScript through tsx), with only the environment it is given, started in a scratch directory so a
 * local `msgflow dev`'s .data/dev.env cannot leak in. Their CPU time is read from /proc where there is one;
 * MSGFLOW_BENCH_CPU_PROFILE_DIR makes each write a V8 CPU profile there when it stops.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** The `msgflow` command from source, as `node --import tsx src/cli/main.ts` runs it. */
export const MSGFLOW_CLI = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
/** Most output kept per process, for error messages. */
const OUTPUT_TAIL_CHARS = 8_000;

export interface ServiceProcess {
  name: string;
  pid: number;
  /** The first match of `ready` in its output. */
  ready: RegExpMatchArray;
  /** The end of its stdout and stderr, interleaved. */
  output(): string;
  /** SIGTERM, SIGKILL after a grace period; resolves once it has exited. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** The process's whole environment, besides PATH and HOME. */
  env: Record<string, string>;
  cwd: string;
  /** Printed (stdout or stderr) once the service is up. */
  ready: RegExp;
  readyTimeoutMs?: number;
}

/** Runs a TypeScript entry point with `args` and waits until it prints `ready`. */
export async function startService(
  name: string,
  script: string,
  args: string[],
  options: SpawnOptions,
): Promise<ServiceProcess> {
  const profileDir = process.env.MSGFLOW_BENCH_CPU_PROFILE_DIR;
  // V8 CPU profiles of each service, written when it exits (open them in Chrome DevTools or VS Code).
  const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profileDir, name)}`] : [];
  const child = spawn(process.execPath, [...profiling, '--import', TSX, script, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`could not be started: ${error.message}`));
    child.once('exit', (code, signal) => resolve(`exited with ${signal ?? `code ${code}`}`));
  });
  const ready = new Promise<RegExpMatchArray>((resolve) => {
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
      const match = output.match(options.ready);
      if (match) resolve(match);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  const failed = Promise.race([
    exited.then((how) => `${name} ${how} before it was ready`),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`${name} was not ready within ${timeoutMs / 1000} s`), timeoutMs);
    }),
  ]);
  const stop = () => stopChild(child, exited);
  const first = await Promise.race([ready, failed]).finally(() => clearTimeout(timer));
  if (typeof first === 'string') {
    await stop();
    throw new Error(`${first}; its output:\n${output}`);
  }
  return { name, pid: child.pid!, ready: first, output: () => output, stop };
}

/** Runs a TypeScript script to its end in a process of its own; answers what it printed on stdout. */
export async function runScript(script: string, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', TSX, script, ...args], {
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout;
}

async function stopChild(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const grace = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(grace);
}

/** CPU seconds (user + system) a process has used so far; undefined where /proc cannot tell. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) used so far by this process's ended children and all they waited for (a
 * child's own children included); undefined where /proc cannot tell.
 */
export function endedChildrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The most resident memory a process has held since it started (VmHWM), in MiB; undefined where /proc cannot tell. */
export function peakMemoryMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) / 1024;
  } catch {
    return undefined;
  }
}

/** USER_HZ: 100 on every Linux this runs on (sysconf is not reachable from Node). */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds a set of processes used while `work` ran, by name. */
export async function measureCpu<T>(
  processes: Record<string, number | undefined>,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number | undefined> }> {
  const before = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const result = await work();
  const cpu = Object.fromEntries(
    Object.entries(processes).map(([name, pid]) => {
      const [start, end] = [before[name], cpuSeconds(pid)];
      return [name, start === undefined || end === undefined ? undefined : end - start];
    }),
  );
  return { result, cpu };
}
