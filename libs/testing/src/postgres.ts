import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The real PostgreSQL the repository and distributed tests use (CI and this machine provide it). */
export const TEST_POSTGRES_URL = process.env.HANGAR_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema prefix no other test file uses, so every file gets fresh schemas (`t_ab12cd_registry`, ...). */
export const uniqueSchemaPrefix = () => `t_${randomBytes(5).toString('hex')}`;

/** Drops every schema a test made under its prefix. */
export async function dropSchemas(prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>('select nspname from pg_namespace where nspname = $1 or nspname like $2', [
      prefix,
      `${prefix}\\_%`,
    ]);
    for (const { nspname } of rows) await client.query(`drop schema "${nspname}" cascade`);
  } finally {
    await client.end();
  }
}
