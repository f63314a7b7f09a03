/**
 * An operator token as boa takes it, the same for the token file, BOA_TOKEN / --token, the Secrets
 * Manager secret and the CLI: at least 16 characters, each visible ASCII (`!` to `~`, RFC 7230's
 * VCHAR) or a visible Latin-1 one (`¡` to `ÿ`, its obs-text). A bearer token is one word on the wire:
 * a space or a line break splits it, and a control character (ESC, NUL) or one beyond Latin-1 cannot
 * be sent at all (fetch refuses the header, curl's request is answered 400), so a token with one let
 * boa start that no caller could ever call (found in a trial). Latin-1 stays allowed: fetch and
 * Python send it as one byte a character and Node reads it back so, and a hand-chosen token with an
 * umlaut worked before this rule (found in review). The tokens boa generates are base64url.
 */
export const OPERATOR_TOKEN_MIN = 16;

export const OPERATOR_TOKEN_RULE = `at least ${OPERATOR_TOKEN_MIN} characters, each visible ASCII (! to ~) or Latin-1 (¡ to ÿ): no spaces, line breaks or control characters`;

/** Every character visible ASCII or Latin-1: the part of the rule a token of any length must keep to be sent. */
export function sendableToken(token: string): boolean {
  return /^[\x21-\x7e\xa1-\xff]+$/.test(token);
}

export function usableOperatorToken(token: string): boolean {
  return token.length >= OPERATOR_TOKEN_MIN && sendableToken(token);
}
