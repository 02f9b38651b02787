/** Where exo and exobar listen by default: each address written once. */

/** exo's API port. */
export const EXO_API_PORT = 52415;
/** exo on this Mac, where exobar looks for one to offer. */
export const LOCAL_EXO_URL = `http://127.0.0.1:${EXO_API_PORT}`;
/** exobar's own API port: next to exo's, so both can run on one Mac. */
export const EXOBAR_API_PORT = 52416;
