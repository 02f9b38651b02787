/** Page entry: picks the bridge (Electron IPC or HTTP to `exobar serve`) and mounts the app. */
// First: zod must be jitless before any schema module below builds its schemas.
import './zod-jitless';
import { pickBridge } from './bridge/pick-bridge';
import { mountExobar } from './mount';

const element = document.getElementById('root');
if (!element) throw new Error('index.html has no #root element');
mountExobar(element, pickBridge().bridge);
