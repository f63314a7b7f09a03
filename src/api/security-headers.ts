/**
 * Said on every answer of boa's, the 503s while it starts included (service/startup.ts): each is read as
 * the type it says, so a log's text/plain or an error's JSON is never sniffed into a page or a script.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };
