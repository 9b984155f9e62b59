/**
 * What counts as a secret in a spec, by name and by form: the value of an environment variable, option or variable
 * whose name looks secret (password, secret, token, credential, private key, API key, access key), and the password
 * of a URL (`scheme://user:password@host`). Pure.
 */

/** Names of environment variables, options and variables whose values are secret. */
export const SECRET_NAME = /passw(or)?d|secret|token|credential|private[_-]?key|api[_-]?key|access[_-]?key/i;

/** A URL's password: `scheme://user:password@`. */
export const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:\s]*):([^/?#\s]*)@/i;

/** A URL's password anywhere in a text. */
export const URL_PASSWORD_ANYWHERE = /([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:'"]*):([^\s/?#@'"]*)@/gi;

/** Whether an environment variable, option or variable name holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** A flag such as `--password` or `-token`, whose next argument is its value. */
export function isSecretFlag(arg: string | undefined): boolean {
  return arg !== undefined && /^-{1,2}[\w.-]+$/.test(arg) && isSecretName(arg);
}

/**
 * Keyed masks in a text: `(sensitive#<digest>)` stands for a secret in a recorded spec. The digest is keyed by the
 * release backend's key, so it tells whether a secret changed without being a plain hash of guessable text.
 */
export const KEYED_MASK = /\(sensitive#[0-9a-f]+\)/g;
