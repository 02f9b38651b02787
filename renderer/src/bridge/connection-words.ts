/**
 * What the page says when it has no snapshot from `exobar serve`: the server cannot be
 * reached, or it runs and refused (or was not given) the page's token. Each says where
 * the token is and how to open the page again. The token lives in the server's data
 * directory and stays the same across restarts, so the address `exobar serve` printed
 * keeps working.
 */

/** The token file's path from a 401 answer; null: the server's token comes from EXOBAR_TOKEN; undefined: not said. */
export type TokenFileHint = string | null | undefined;

function whereIsTheToken(tokenFile: TokenFileHint): string {
  if (tokenFile === null) return 'The server takes its token from its EXOBAR_TOKEN environment variable.';
  if (tokenFile === undefined) return "The token is in the file `token` of the server's data directory.";
  return `The token is in ${tokenFile} on the machine running exobar.`;
}

function howToOpen(origin: string): string {
  return `Open the address \`exobar serve\` printed in its terminal (${origin}/#token=…), or ${origin}/#token= followed by the token. The token stays the same when the server restarts.`;
}

/** The server answered 401/403 to the page's token. */
export function tokenRefusedMessage(origin: string, tokenFile: TokenFileHint): string {
  return `exobar is running, but it refused this page's access token (it is wrong or out of date). ${whereIsTheToken(tokenFile)} ${howToOpen(origin)}`;
}

/** The page was opened without `#token=…`. */
export function noTokenMessage(origin: string, tokenFile: TokenFileHint): string {
  return `This page has no access token. ${whereIsTheToken(tokenFile)} ${howToOpen(origin)}`;
}

/** Nothing answered at the server's address. */
export function unreachableMessage(origin: string, reason: string): string {
  return `Nothing answers at ${origin} (${reason}). If exobar stopped, start it again with \`exobar serve\` and reload this page.`;
}

/** The event stream broke after it worked: retrying. */
export function lostMessage(origin: string, reason: string, retryInSeconds: number): string {
  return `Lost connection to exobar at ${origin}: ${reason}. Retrying in ${retryInSeconds} s; if it stopped, start it again with \`exobar serve\`.`;
}

/** The token file's path a 401 answer names (`error.tokenFile`), read from its JSON body. */
export async function tokenFileOf(response: Response): Promise<TokenFileHint> {
  try {
    const body = (await response.json()) as { error?: { tokenFile?: unknown } };
    const file = body.error?.tokenFile;
    return typeof file === 'string' || file === null ? file : undefined;
  } catch {
    return undefined;
  }
}
