/**
 * Making room for a model to load on request: which resident instances unload first,
 * or why nothing can. Pure: the loader (model-loader.ts) reads the node and the memory,
 * this decides.
 *
 * Rules (llama-swap's, LM Studio's and oMLX's, with the Mac's GPU in mind): the caps
 * are the most models resident and the most bytes they hold by the fit estimate; the
 * model must also fit in the memory free now (after headroom), and an instance that
 * unloads gives back its estimate. Only an idle, unpinned, serving instance may unload
 * to make room, the least recently used first; a pinned or busy one never does.
 */
import { formatMemory } from '../../../shared/memory-words';

/** A resident instance as the plan sees it. */
export interface ResidentInfo {
  id: string;
  model: string;
  memoryBytes: number;
  pinned: boolean;
  /** Requests queued or in flight, or still loading: it cannot unload now. */
  busy: boolean;
  /** Monotonic or epoch ms of its last use; smaller unloads first. */
  lastUsedAt: number;
}

export interface RoomPlanInput {
  model: { id: string; memoryBytes: number };
  residents: readonly ResidentInfo[];
  /** Most instances resident; null: no cap. */
  maxModels: number | null;
  /** Most bytes resident by the estimate; null: no cap. */
  maxBytes: number | null;
  /** Memory a new model may take now (after headroom, within the GPU's limit), bytes; null: the fit check passed. */
  availableBytes: number | null;
  /** The fit check's own words for the shortage, said when memory is what is missing. */
  memoryWords?: string;
}

export type RoomPlan = { ok: true; evict: ResidentInfo[] } | { ok: false; reason: string };

/** Which instances unload so `model` can load, least recently used first; or why it cannot. */
export function planRoom(input: RoomPlanInput): RoomPlan {
  const { model, residents } = input;
  const evictable = residents.filter((r) => !r.pinned && !r.busy).sort((a, b) => a.lastUsedAt - b.lastUsedAt);
  const evict: ResidentInfo[] = [];
  const stays = () => residents.filter((r) => !evict.includes(r));
  const residentBytes = () => stays().reduce((sum, r) => sum + r.memoryBytes, 0);
  const freedBytes = () => evict.reduce((sum, r) => sum + r.memoryBytes, 0);
  const fits = () =>
    (input.maxModels === null || stays().length + 1 <= input.maxModels) &&
    (input.maxBytes === null || residentBytes() + model.memoryBytes <= input.maxBytes) &&
    (input.availableBytes === null || input.availableBytes + freedBytes() >= model.memoryBytes);
  for (const next of evictable) {
    if (fits()) break;
    evict.push(next);
  }
  if (fits()) return { ok: true, evict };
  return { ok: false, reason: refusalWords(input, evict) };
}

/** Why the model cannot load, and what holds the room. */
function refusalWords(input: RoomPlanInput, evict: readonly ResidentInfo[]): string {
  const { model, residents } = input;
  const needs: string[] = [];
  if (input.maxModels !== null && residents.length - evict.length + 1 > input.maxModels) {
    needs.push(`at most ${input.maxModels} model${input.maxModels === 1 ? '' : 's'} may be resident (onDemand.maxModels)`);
  }
  const staysBytes = residents.filter((r) => !evict.includes(r)).reduce((sum, r) => sum + r.memoryBytes, 0);
  if (input.maxBytes !== null && staysBytes + model.memoryBytes > input.maxBytes) {
    needs.push(`it needs ${formatMemory(model.memoryBytes)} and ${formatMemory(staysBytes)} of the ${formatMemory(input.maxBytes)} cap (onDemand.maxBytes) stay resident`);
  }
  const freed = evict.reduce((sum, r) => sum + r.memoryBytes, 0);
  if (input.availableBytes !== null && input.availableBytes + freed < model.memoryBytes) {
    needs.push(
      input.memoryWords?.replace(/\.$/, '') ||
        `not enough memory: it needs ${formatMemory(model.memoryBytes)}, ${formatMemory(Math.max(0, input.availableBytes) + freed)} would be free`,
    );
  }
  const held = residents
    .filter((r) => !evict.includes(r))
    .map((r) => `${r.model} (${r.id}) is ${r.pinned ? 'pinned' : 'busy'}`)
    .join(', ');
  return `${model.id} cannot load: ${needs.join('; ')}; nothing else can unload${held ? ` (${held})` : ''}`;
}
