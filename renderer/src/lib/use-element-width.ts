import { useLayoutEffect, useState, type RefObject } from 'react';

/**
 * The element's content width in whole pixels, followed with a ResizeObserver (it
 * fires on layout changes only, never per frame); `fallback` until measured and where
 * there is no ResizeObserver (jsdom).
 */
export function useElementWidth(ref: RefObject<HTMLElement | null>, fallback: number): number {
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    const measure = (): void => {
      const measured = Math.floor(element.getBoundingClientRect().width);
      // Zero while hidden: keep the last real width rather than draw a chart 0 px wide.
      if (measured > 0) setWidth(measured);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}
