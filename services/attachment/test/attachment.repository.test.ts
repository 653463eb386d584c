import { randomUUID } from 'node:crypto';
import { attachmentMigrations, createAttachmentRepository, type AttachmentDatabase, type AttachmentRepository } from '@hangar/attachment';
import { openEngine, SQL_ENGINES, type EngineFixture, sealingCipher } from '@hangar/testing';
import type { Kysely } from '@hangar/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(SQL_ENGINES)('attachment repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<AttachmentDatabase>;
  let repository: AttachmentRepository;
  const bytes = (text: string) => new Uint8Array(Buffer.from(text));

  async function store(tenantId: string, sessionId: string | null, chunks: string[]) {
    const id = randomUUID();
    await repository.begin(tenantId, { id, fileName: 'f.txt', mediaType: 'text/plain', sessionId });
    for (const [seq, chunk] of chunks.entries()) await repository.writeChunk(id, seq, bytes(chunk));
    return repository.complete(id, chunks.join('').length, 'hash');
  }

  const chunkCount = async () =>
    Number(
      (
        await db
          .selectFrom('attachment_chunks')
          .select((eb) => eb.fn.countAll().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<AttachmentDatabase>('attachments', attachmentMigrations)).db;
    repository = createAttachmentRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('stores chunks and reads them back in order, in batches', async () => {
    const row = await store('t1', 's1', ['ab', 'cd', 'ef', 'gh', 'ij']);
    expect(row).toMatchObject({ fileName: 'f.txt', mediaType: 'text/plain', size: 10, sha256: 'hash', sessionId: 's1' });
    const first = await repository.readChunks(row.id, 0, 3);
    const second = await repository.readChunks(row.id, 3, 3);
    expect([...first, ...second].map((chunk) => Buffer.from(chunk).toString())).toEqual(['ab', 'cd', 'ef', 'gh', 'ij']);
  });

  it('never shows an unfinished upload, and discards it with its bytes', async () => {
    const id = randomUUID();
    const before = await chunkCount();
    await repository.begin('t1', { id, fileName: 'partial', mediaType: 'image/png', sessionId: null });
    await repository.writeChunk(id, 0, bytes('xx'));
    expect(await repository.get('t1', id)).toBeUndefined();
    expect((await repository.list('t1', { skip: 0, take: 200 })).map((row) => row.id)).not.toContain(id);
    await repository.discard(id);
    expect(await chunkCount()).toBe(before);
  });

  it('sweeps unfinished uploads older than the cut-off only', async () => {
    const id = randomUUID();
    await repository.begin('t1', { id, fileName: 'crashed', mediaType: 'image/png', sessionId: null });
    expect(await repository.sweepUnfinished(new Date(Date.now() - 60_000))).toBe(0);
    expect(await repository.sweepUnfinished(new Date(Date.now() + 60_000))).toBe(1);
  });

  it('lists newest first, by session, paged, per tenant', async () => {
    const loose = await store('t1', null, ['x']);
    const other = await store('t2', 's1', ['y']);
    const all = await repository.list('t1', { skip: 0, take: 200 });
    // Newest first. (createdAt has millisecond precision; PostgreSQL orders by microseconds, so two
    // rows within one millisecond may come in either order here.)
    const times = all.map((row) => Date.parse(row.createdAt));
    expect(times.every((time, index) => index === 0 || times[index - 1] >= time)).toBe(true);
    expect(all.map((row) => row.id)).toContain(loose.id);
    expect(all.map((row) => row.id)).not.toContain(other.id);
    const inSession = await repository.list('t1', { sessionId: 's1', skip: 0, take: 200 });
    expect(inSession.every((row) => row.sessionId === 's1')).toBe(true);
    expect(inSession.map((row) => row.id)).not.toContain(loose.id);
    expect(await repository.list('t1', { skip: 1, take: 1 })).toEqual(all.slice(1, 2));
  });

  it('deletes one attachment, or a session’s, with the bytes at once', async () => {
    const doomed = await store('t1', 's-gone', ['1', '2']);
    await store('t1', 's-gone', ['3']);
    const before = await chunkCount();
    expect(await repository.delete('t2', doomed.id)).toBe(false);
    expect(await repository.delete('t1', doomed.id)).toBe(true);
    expect(await chunkCount()).toBe(before - 2);
    expect(await repository.delete('t1', doomed.id)).toBe(false);
    expect(await repository.deleteBySession('t1', 's-gone')).toBe(1);
    expect(await chunkCount()).toBe(before - 3);
  });

  it('seals file names when content protection is on; lists and reads show them as given', async () => {
    const sealed = createAttachmentRepository(db, sealingCipher());
    const id = randomUUID();
    await sealed.begin('t7', { id, fileName: 'canary-91.pdf', mediaType: 'application/pdf', sessionId: 's7' });
    expect((await sealed.complete(id, 0, 'hash')).fileName).toBe('canary-91.pdf');
    const row = await db.selectFrom('attachments').select('file_name').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.file_name).toMatch(/^hgc1\.k1\./);
    expect((await sealed.get('t7', id))?.fileName).toBe('canary-91.pdf');
    expect((await sealed.list('t7', { sessionId: 's7', skip: 0, take: 10 })).map((each) => each.fileName)).toEqual(['canary-91.pdf']);
  });
});
