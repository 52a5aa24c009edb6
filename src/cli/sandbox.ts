import type { Command } from 'commander';

/** Registers `msgflow sandbox …`; filled in by the sandbox work. */
export function registerSandboxCommands(_program: Command): void {}
