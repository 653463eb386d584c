import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { href } from '../router.js';
import { Empty, Loaded, Pager, Problem, Table, formatTime, pageQuery, useLoaded, type Column } from '../ui.js';

type Attachment = Awaited<ReturnType<HangarClient['attachments']['list']>>[number];

const formatSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** The tenant's attachments (descriptors; the bytes only on download), an upload, and a filter by session. */
export function AttachmentsPage({ client }: { client: HangarClient }) {
  const [sessionId, setSessionId] = useState('');
  const [page, setPage] = useState(0);
  const [file, setFile] = useState<File>();
  const [uploadSession, setUploadSession] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const attachments = useLoaded(
    () => client.attachments.list({ query: { ...(sessionId.trim() && { sessionId: sessionId.trim() }), ...pageQuery(page) } }),
    [client, sessionId, page],
  );

  const act = async (action: () => Promise<unknown>) => {
    setError(undefined);
    setBusy(true);
    try {
      await action();
      attachments.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const upload = (event: Event) => {
    event.preventDefault();
    if (!file) return;
    const form = new FormData();
    form.append('file', file, file.name);
    void act(() => client.attachments.upload(form, { query: uploadSession.trim() ? { sessionId: uploadSession.trim() } : {} }));
  };
  // The download needs the credential, so it is fetched here and handed to the browser as a file.
  const download = (id: string, fileName: string) =>
    act(async () => {
      const blob = await client.attachments.download(id);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = fileName;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    });

  const columns: Column<Attachment>[] = [
    {
      label: 'File',
      value: (attachment) => (
        <button class="link" onClick={() => download(attachment.id, attachment.fileName)}>
          {attachment.fileName}
        </button>
      ),
    },
    { label: 'Type', value: (attachment) => attachment.mediaType },
    { label: 'Size', value: (attachment) => formatSize(attachment.size) },
    {
      label: 'Session',
      value: (attachment) => (attachment.sessionId ? <a href={href('sessions', attachment.sessionId)}>{attachment.sessionId}</a> : '—'),
    },
    { label: 'Stored', value: (attachment) => formatTime(attachment.createdAt) },
    {
      label: '',
      isAction: true,
      value: (attachment) => (
        <button
          class="quiet small"
          aria-label={`Delete ${attachment.fileName}`}
          disabled={busy}
          onClick={() => act(() => client.attachments.delete(attachment.id))}
        >
          Delete
        </button>
      ),
    },
  ];

  return (
    <section>
      <h1>Attachments</h1>
      <form class="card" onSubmit={upload} aria-label="Upload an attachment">
        <div class="row">
          <label>
            File
            <input type="file" onChange={(event) => setFile(event.currentTarget.files?.[0])} />
          </label>
          <label>
            Session (optional)
            <input value={uploadSession} onInput={(event) => setUploadSession(event.currentTarget.value)} />
          </label>
          <button type="submit" disabled={!file || busy}>
            Upload
          </button>
        </div>
      </form>
      {error !== undefined && <Problem error={error} />}
      <form class="row filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Show only the session
          <input name="sessionId" value={sessionId} onChange={(event) => (setPage(0), setSessionId(event.currentTarget.value))} />
        </label>
      </form>
      <Loaded state={attachments} what="attachments">
        {(list) =>
          list.length === 0 && page === 0 ? (
            <Empty>No attachment{sessionId.trim() ? ' in this session' : ''} yet.</Empty>
          ) : (
            <>
              <Table label="Attachments" columns={columns} rows={list} rowKey={(attachment) => attachment.id} />
              <Pager page={page} shown={list.length} onPage={setPage} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}
