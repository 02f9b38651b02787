/**
 * Where MLX runs and what "Set up MLX runtime" installs there.
 *
 * MLX runs on Metal on a Mac with Apple silicon and on the CPU on Linux (glibc 2.35+,
 * its `mlx[cpu]` wheels); the runner's hello says which. Intel Macs (or the app under
 * Rosetta) and Windows have no MLX. The versions are pinned: the runner was checked
 * against exactly these (electron/runners/mlx/requirements*.txt carry the same pins,
 * a test keeps them equal).
 */
export const MLX_VERSION = '0.32.4';
export const MLX_LM_VERSION = '0.32.2';
/** Constrained decoding for structured output and forced tool calls (docs/structured-output.md). */
export const LLGUIDANCE_VERSION = '1.9.1';

export type MlxDevice = 'metal' | 'cpu';

export type MlxPlatform = { supported: true; device: MlxDevice; packages: string[] } | { supported: false; reason: string };

/** Whether MLX runs on this platform, on which device, and the pip packages that install it. */
export function mlxPlatform(platform: NodeJS.Platform, arch: string): MlxPlatform {
  if (platform === 'darwin' && arch === 'arm64') {
    return { supported: true, device: 'metal', packages: [`mlx==${MLX_VERSION}`, `mlx-lm==${MLX_LM_VERSION}`, `llguidance==${LLGUIDANCE_VERSION}`] };
  }
  if (platform === 'linux' && (arch === 'x64' || arch === 'arm64')) {
    return { supported: true, device: 'cpu', packages: [`mlx[cpu]==${MLX_VERSION}`, `mlx-lm==${MLX_LM_VERSION}`, `llguidance==${LLGUIDANCE_VERSION}`] };
  }
  const where = `${platform}/${arch}`;
  const hint = platform === 'darwin' ? ' (an Intel Mac, or this app running under Rosetta)' : '';
  return {
    supported: false,
    reason: `MLX runs on macOS with Apple silicon (Metal) or on Linux (CPU); this is ${where}${hint}. Simulated models still work.`,
  };
}
