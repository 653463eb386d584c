import { sql } from 'kysely';

/** `\u0000` escapes in JSON text (an escaped backslash before `u0000` is not one). */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * A jsonb parameter: both drivers would turn a JS array into a Postgres array, so send the JSON
 * text. PostgreSQL's jsonb cannot hold U+0000: a NUL in a value (a model may answer one) is stored
 * as U+FFFD, the replacement character, rather than failing the write.
 */
export const jsonb = <T = unknown>(value: unknown) => sql<T>`${JSON.stringify(value).replace(NUL_ESCAPE, '$1\\ufffd')}::jsonb`;
