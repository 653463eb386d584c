import { sql } from 'kysely';

/** A jsonb parameter: both drivers would turn a JS array into a Postgres array, so send the JSON text. */
export const jsonb = <T = unknown>(value: unknown) => sql<T>`${JSON.stringify(value)}::jsonb`;
