import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { href, navigate } from '../router.js';
import { Empty, Loaded, Problem, formatTime, useLoaded } from '../ui.js';

/** The tenant's sessions, most recently written first. */
export function SessionsPage({ client }: { client: HangarClient }) {
  const sessions = useLoaded(() => client.sessions.list(), [client]);
  return (
    <section>
      <h1>Sessions</h1>
      <Loaded state={sessions} what="sessions">
        {(list) =>
          list.length === 0 ? (
            <Empty>No session yet: a run that names a new sessionId starts one.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Session</th>
                  <th>Agent</th>
                  <th>Messages</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                {[...list]
                  .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
                  .map((session) => (
                    <tr key={session.id}>
                      <td>
                        <a href={href('sessions', session.id)}>{session.id}</a>
                      </td>
                      <td>{session.agentName ?? '—'}</td>
                      <td>{session.messageCount}</td>
                      <td>{formatTime(session.updatedAt)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part) => (typeof part?.text === 'string' ? part.text : JSON.stringify(part))).join('')
      : JSON.stringify(content);

/** One session's history; a branch copies it up to a message into a new session. */
export function SessionPage({ client, sessionId }: { client: HangarClient; sessionId: string }) {
  const session = useLoaded(() => client.sessions.get(sessionId), [client, sessionId]);
  const [error, setError] = useState<unknown>();
  const branch = async (upToSequence: number) => {
    setError(undefined);
    try {
      const branched = await client.sessions.branch(sessionId, { upToSequence });
      navigate('sessions', branched.sessionId);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section>
      <p>
        <a href={href('sessions')}>← Sessions</a>
      </p>
      <h1>Session {sessionId}</h1>
      {error !== undefined && <Problem error={error} />}
      <Loaded state={session} what="the session">
        {(detail) => (
          <>
            {detail.parentSessionId && (
              <p>
                Branched from <a href={href('sessions', detail.parentSessionId)}>{detail.parentSessionId}</a>
              </p>
            )}
            {detail.messages === null ? (
              <Empty>This session store keeps no readable history.</Empty>
            ) : detail.messages.length === 0 ? (
              <Empty>No message yet.</Empty>
            ) : (
              <ol class="messages" aria-label="Messages">
                {detail.messages.map((message, sequence) => (
                  <li class={`message message-${message.role}`} key={message.id}>
                    <div class="row">
                      <strong>{message.role}</strong>
                      <span class="muted">{formatTime(message.createdAt)}</span>
                      {message.runId && (
                        <a class="muted" href={href('runs', message.runId)}>
                          run
                        </a>
                      )}
                      <button class="quiet small" onClick={() => branch(sequence)}>
                        Branch after this message
                      </button>
                    </div>
                    <p class="content">{textOf(message.content)}</p>
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
