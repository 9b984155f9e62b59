/**
 * Redaction of backend URLs: a PostgreSQL URL may carry a password (`postgres://user:secret@host/db` or
 * `?password=secret`). Everything kapps prints about a backend goes through `redactUrl`, and every error text from
 * the database driver through `redactText`, so the password never reaches a terminal or a log.
 */

/** The mask that replaces a password. */
export const PASSWORD_MASK = '***';

/** The URL with its password (userinfo and `password=` query parameter) replaced by `***`. */
export function redactUrl(url: string): string {
  let out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):[^/?#@]*@/i, `$1:${PASSWORD_MASK}@`);
  // A password containing '@' (badly escaped) leaves more after the first '@': mask up to the last '@' too.
  out = out.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):[^/?#]*@/i, `$1:${PASSWORD_MASK}@`);
  out = out.replace(/([?&]password=)[^&#]*/gi, `$1${PASSWORD_MASK}`);
  return out;
}

/**
 * A command line with every credential masked, whatever its form: a URL with a password anywhere in an argument
 * (`--backend=postgres://u:pw@h/db`, `--backend postgres://…`, `KEY=postgres://…`, several URLs in one argument),
 * and `password=` parameters (`?password=`, `&password=`, a libpq-style `password=…` word).
 */
export function redactArgv(argv: readonly string[]): string[] {
  return argv.map((arg) =>
    arg
      .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#]*@/gi, `$1:${PASSWORD_MASK}@`)
      .replace(/((?:^|[?&;\s])password=)[^&#;\s]*/gi, `$1${PASSWORD_MASK}`),
  );
}

/** A text (an error message) with every credential masked as in `redactArgv`. */
export function redactCredentials(text: string): string {
  return redactArgv([text])[0] ?? text;
}

/** The secrets a URL carries (its password, raw and percent-decoded), to scrub from error texts. */
export function urlSecrets(url: string): string[] {
  const secrets = new Set<string>();
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:([^/?#]*)@/i.exec(url);
  if (userinfo?.[1]) secrets.add(userinfo[1]);
  for (const match of url.matchAll(/[?&]password=([^&#]*)/gi)) if (match[1]) secrets.add(match[1]);
  for (const secret of [...secrets]) {
    try {
      secrets.add(decodeURIComponent(secret));
    } catch {
      // Not valid percent-encoding: the raw text is all there is to scrub.
    }
  }
  return [...secrets].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}

/** `text` with the URL redacted and each of the URL's secrets replaced by `***`. */
export function redactText(text: string, url: string): string {
  let out = text.split(url).join(redactUrl(url));
  for (const secret of urlSecrets(url)) out = out.split(secret).join(PASSWORD_MASK);
  return out;
}
