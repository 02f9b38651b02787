import type { ReactNode } from 'react';

/** A collapsible panel's heading: a button with a chevron that opens and closes the body it controls. */
export function PanelToggle({ open, onToggle, bodyId, children }: { open: boolean; onToggle: () => void; bodyId: string; children: ReactNode }) {
  return (
    <h2>
      <button type="button" className="panel-toggle" aria-expanded={open} aria-controls={bodyId} onClick={onToggle}>
        <span className="chevron" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
        {children}
      </button>
    </h2>
  );
}
