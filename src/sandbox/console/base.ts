/** Where the console is mounted (its own module, so sessions and pages can share it without a cycle). */
export const CONSOLE_BASE = '/dashboard';
