/** How to start one runner process: the supervisor adds nothing but the process group. */
export interface SpawnSpec {
  command: string;
  args: string[];
  /** Merged over the node's own environment; the fast-synch variables are always set here. */
  env: Record<string, string>;
  cwd?: string;
}
