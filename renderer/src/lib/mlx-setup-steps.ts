/**
 * The steps of "Set up MLX runtime" in the order the core runs them
 * (electron/core/mlx/setup-mlx-runtime.ts), in words for the popover.
 */
export const MLX_SETUP_STEPS = [
  { step: 'check-platform', label: 'Checking this Mac' },
  { step: 'check-python', label: 'Checking Python' },
  { step: 'create-venv', label: 'Creating the virtual environment' },
  { step: 'upgrade-pip', label: 'Upgrading pip' },
  { step: 'install-mlx-lm', label: 'Installing mlx-lm' },
  { step: 'verify', label: 'Checking that mlx-lm imports' },
] as const;

/** A step's words and its 1-based position (null for a step this page does not know, e.g. "done"). */
export function describeMlxSetupStep(step: string): { label: string; number: number | null; total: number } {
  const index = MLX_SETUP_STEPS.findIndex((s) => s.step === step);
  const total = MLX_SETUP_STEPS.length;
  if (index < 0) return { label: step === 'done' ? 'Done' : step, number: null, total };
  return { label: MLX_SETUP_STEPS[index]!.label, number: index + 1, total };
}
