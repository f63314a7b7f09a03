/**
 * An operator token as boa takes it, the same for the token file, BOA_TOKEN / --token, the Secrets
 * Manager secret and the CLI: at least 16 characters, each visible ASCII (`!` to `~`, RFC 7230's
 * VCHAR). A bearer token is one word on the wire: a space or a line break splits it, and a control
 * character (ESC, NUL) or a non-ASCII one cannot be sent at all (fetch refuses the header, curl's
 * request is answered 400), so a token with one let boa start that no caller could ever call (found
 * in a trial). The tokens boa generates are base64url, well inside this.
 */
export const OPERATOR_TOKEN_MIN = 16;

export const OPERATOR_TOKEN_RULE = `at least ${OPERATOR_TOKEN_MIN} characters, each visible ASCII (! to ~): no spaces, line breaks or control characters`;

/** Every character visible ASCII: the part of the rule a token of any length must keep to be sent. */
export function sendableToken(token: string): boolean {
  return /^[\x21-\x7e]+$/.test(token);
}

export function usableOperatorToken(token: string): boolean {
  return token.length >= OPERATOR_TOKEN_MIN && sendableToken(token);
}
