import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { headersFor, type Credential } from '../api.js';
import { href } from '../router.js';
import { Loaded, Problem, useLoaded } from '../ui.js';

interface Operation {
  method: string;
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header'; required?: boolean }>;
  hasBody: boolean;
}

/** Every operation of the gateway's OpenAPI document, grouped by tag, so each route is two clicks away. */
function operationsOf(document: any): Operation[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, methods]: [string, any]) =>
    Object.entries(methods).map(([method, operation]: [string, any]) => ({
      method: method.toUpperCase(),
      path,
      operationId: operation.operationId,
      summary: operation.summary ?? '',
      tag: operation.tags?.[0] ?? 'Other',
      parameters: operation.parameters ?? [],
      hasBody: operation.requestBody !== undefined,
    })),
  );
}

/** The API explorer: any route of the OpenAPI document called with the signed-in credential. */
export function ExplorerPage({ client, credential, operationId }: { client: HangarClient; credential: Credential; operationId?: string }) {
  const document = useLoaded(() => client.meta.getOpenApiDocument(), [client]);
  return (
    <section>
      <h1>API explorer</h1>
      <Loaded state={document} what="the OpenAPI document">
        {(loaded) => {
          const operations = operationsOf(loaded);
          const chosen = operations.find((operation) => operation.operationId === operationId);
          if (chosen) return <Call operation={chosen} credential={credential} />;
          const tags = [...new Set(operations.map((operation) => operation.tag))];
          return (
            <div class="explorer">
              {tags.map((tag) => (
                <details open>
                  <summary>{tag}</summary>
                  <ul>
                    {operations
                      .filter((operation) => operation.tag === tag)
                      .map((operation) => (
                        <li>
                          <a href={href('api', operation.operationId)}>
                            <code>{operation.method}</code> {operation.path}
                          </a>{' '}
                          <span class="muted">{operation.summary}</span>
                        </li>
                      ))}
                  </ul>
                </details>
              ))}
            </div>
          );
        }}
      </Loaded>
    </section>
  );
}

function Call({ operation, credential }: { operation: Operation; credential: Credential }) {
  const fields = operation.parameters.filter((parameter) => parameter.in !== 'header');
  const [values, setValues] = useState<Record<string, string>>({});
  const [body, setBody] = useState(operation.hasBody ? '{\n}' : '');
  const [answer, setAnswer] = useState<{ status: number; type: string; text: string }>();
  const [error, setError] = useState<unknown>();
  const send = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      let path = operation.path;
      const query = new URLSearchParams();
      for (const field of fields) {
        const value = values[field.name] ?? '';
        if (field.in === 'path') path = path.replace(`{${field.name}}`, encodeURIComponent(value));
        else if (value) query.set(field.name, value);
      }
      const response = await fetch(`${path}${query.size ? `?${query}` : ''}`, {
        method: operation.method,
        headers: { ...headersFor(credential), ...(operation.hasBody && { 'Content-Type': 'application/json' }) },
        body: operation.hasBody ? body : undefined,
      });
      const type = response.headers.get('content-type') ?? '';
      const text = await response.text();
      setAnswer({ status: response.status, type, text: type.includes('json') && text ? JSON.stringify(JSON.parse(text), null, 2) : text });
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <>
      <p>
        <a href={href('api')}>← Every route</a>
      </p>
      <h2>
        <code>{operation.method}</code> {operation.path}
      </h2>
      <p class="muted">{operation.summary}</p>
      <form class="card" onSubmit={send}>
        {fields.map((field) => (
          <label>
            {field.name}{' '}
            <span class="muted">
              ({field.in}
              {field.required ? ', required' : ''})
            </span>
            <input
              name={field.name}
              required={field.required}
              value={values[field.name] ?? ''}
              onInput={(event) => setValues({ ...values, [field.name]: event.currentTarget.value })}
            />
          </label>
        ))}
        {operation.hasBody && (
          <label>
            Body (JSON)
            <textarea name="body" rows={8} class="code" value={body} onInput={(event) => setBody(event.currentTarget.value)} />
          </label>
        )}
        <button type="submit">Send</button>
      </form>
      {error !== undefined && <Problem error={error} />}
      {answer && (
        <div class="card">
          <p>
            <strong>{answer.status}</strong> <span class="muted">{answer.type}</span>
          </p>
          <pre class="block" data-testid="response">
            {answer.text}
          </pre>
        </div>
      )}
    </>
  );
}
