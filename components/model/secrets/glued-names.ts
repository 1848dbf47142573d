/** Credential units written as one word (`PGPASSWORD`, `SSHPASS`, `REQUIREPASS`), and the words that only look so. */

/** Concatenated units (`PGPASSWORD`, `CLIENTSECRET`, `ACCESSTOKEN`): a word that ends with one of these. */
export const GLUED_SUFFIXES = [
  "PASSWORD",
  "PASSWORDS",
  "PASSWD",
  // `SSHPASS` (sshpass -e), `MASTERPASS`; a word that only starts with PASS (`PASSIVE`) does not end with it.
  "PASS",
  "PASSPHRASE",
  "SECRET",
  "SECRETS",
  "APIKEY",
  "ACCESSKEY",
  "SECRETKEY",
  "PRIVATEKEY",
  "SIGNINGKEY",
  "MASTERKEY",
  "ACCOUNTKEY",
  "AUTHTOKEN",
  "ACCESSTOKEN",
  "APITOKEN",
  "BEARERTOKEN",
  "REFRESHTOKEN",
  "SESSIONTOKEN",
];

/**
 * Options and settings that are passwords under their own glued names (Redis, Java keytool, OpenSSL's `-passin` and
 * `-passout`, which take `pass:<password>`).
 */
export const GLUED_WORDS = new Set([
  "REQUIREPASS",
  "MASTERAUTH",
  "MASTERPASS",
  "STOREPASS",
  "KEYPASS",
  "PASSIN",
  "PASSOUT",
]);

/**
 * Shared secrets that are not called keys: an Erlang distribution cookie (`RABBITMQ_ERLANG_COOKIE`) gives control of
 * the node. A bare COOKIE (`COOKIE_SECURE`) is judged like a bare KEY, by its value.
 */
export const COOKIE_QUALIFIERS = new Set(["ERLANG", "SESSION", "AUTH"]);

/** English words that end in PASS and are no password (`COMPASS`, `BYPASS`, `OVERPASS`). */
export const ENGLISH_PASS = /(?:COM|BY|OVER|UNDER|SUR|TRES|ENCOM|MULTI|SINGLE|ONE|TWO)PASS$/;
