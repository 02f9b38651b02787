/**
 * Renderer tests wait on what the page shows (`findBy…`, `waitFor`), never on a window of
 * time. Testing Library's default gives up after 1 s, which a jsdom render of a chart
 * exceeds on a loaded 2-core machine (measured: one panel test took 30 s beside two busy
 * loops and other work). The wait ends as soon as the element appears; this bound only
 * decides how long a genuinely missing element takes to be reported.
 */
import { configure } from '@testing-library/react';

configure({ asyncUtilTimeout: 30_000 });
