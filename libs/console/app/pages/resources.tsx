import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { RESOURCE_KINDS, type ResourceAction, type ResourceKind } from '../resource-kinds.js';
import { href, navigate } from '../router.js';
import { Empty, Loaded, Problem, Table, useLoaded, type Column } from '../ui.js';

/** The route groups managed here, one line each. */
export function ManagePage() {
  return (
    <section>
      <h1>Manage</h1>
      <ul class="kinds">
        {RESOURCE_KINDS.map((kind) => (
          <li key={kind.path}>
            <a href={href('manage', kind.path)}>{kind.title}</a>
            <span class="muted">{kind.summary}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A JSON body sent as it is typed: the API says what it refuses and why; its answer is shown (an API key's only showing). */
function JsonEditor({
  title,
  initial,
  askName,
  send,
  onSent,
  submitLabel = 'Save',
  link,
}: {
  title: string;
  initial: unknown;
  /** Kinds addressed by name ask it for a new one; an edit sends to the resource it is on. */
  askName: boolean;
  send: (body: unknown, name: string) => Promise<unknown>;
  onSent: () => void;
  submitLabel?: string;
  link?: ResourceAction['link'];
}) {
  const [text, setText] = useState(() => JSON.stringify(initial, null, 2));
  const [name, setName] = useState('');
  const [answer, setAnswer] = useState<unknown>();
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setAnswer(undefined);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (failure) {
      setError(new Error(`Not JSON yet: ${(failure as Error).message}`));
      return;
    }
    try {
      setAnswer((await send(body, name.trim())) ?? null);
      onSent();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      {askName && (
        <label>
          Name
          <input value={name} required onInput={(event) => setName(event.currentTarget.value)} />
        </label>
      )}
      <label>
        Body (JSON)
        <textarea rows={8} class="code" value={text} onInput={(event) => setText(event.currentTarget.value)} />
      </label>
      <div class="row">
        <button type="submit">{submitLabel}</button>
      </div>
      {error !== undefined && <Problem error={error} />}
      {answer !== undefined && (
        <pre class="block" data-testid="answer">
          {JSON.stringify(answer, null, 2)}
        </pre>
      )}
      {answer != null && link && <a href={link.to(answer)}>{link.label}</a>}
    </form>
  );
}

/** One kind's list, a way to remove each, and a JSON form for a new one. */
export function ResourceListPage({ client, kind }: { client: HangarClient; kind: ResourceKind }) {
  const items = useLoaded(() => kind.list(client), [client, kind]);
  const [error, setError] = useState<unknown>();
  const remove = async (key: string) => {
    setError(undefined);
    try {
      await kind.remove!.send(client, key);
      items.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  const columns: Column[] = kind.remove
    ? [
        ...kind.columns,
        {
          label: '',
          isAction: true,
          value: (item) => (
            <button class="quiet small" aria-label={`${kind.remove!.label} ${kind.keyOf(item)}`} onClick={() => remove(kind.keyOf(item))}>
              {kind.remove!.label}
            </button>
          ),
        },
      ]
    : kind.columns;
  return (
    <section>
      <p>
        <a href={href('manage')}>← Manage</a>
      </p>
      <h1>{kind.title}</h1>
      <p class="muted">{kind.summary}</p>
      {error !== undefined && <Problem error={error} />}
      <Loaded state={items} what={kind.title.toLowerCase()}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No {kind.noun} yet.</Empty>
          ) : (
            <Table
              label={kind.title}
              columns={columns}
              rows={list}
              linkTo={kind.get && ((item) => href('manage', kind.path, kind.keyOf(item)))}
            />
          )
        }
      </Loaded>
      {kind.write && (
        <JsonEditor
          title={`New ${kind.noun}`}
          initial={kind.write.template}
          askName={kind.write.byName}
          send={(body, name) => kind.write!.send(client, body, name)}
          onSent={items.reload}
        />
      )}
    </section>
  );
}

const pick = (value: any, fields: string[] | ((current: any) => string[])) =>
  Object.fromEntries(
    (typeof fields === 'function' ? fields(value) : fields)
      .filter((field) => value?.[field] !== undefined)
      .map((field) => [field, value[field]]),
  );

/** One resource as the API returns it, its actions, an edit of its writable fields, and its related list. */
export function ResourcePage({ client, kind, resourceKey }: { client: HangarClient; kind: ResourceKind; resourceKey: string }) {
  const item = useLoaded(() => kind.get!(client, resourceKey), [client, kind, resourceKey]);
  const related = useLoaded(() => kind.related?.list(client, resourceKey) ?? Promise.resolve([]), [client, kind, resourceKey]);
  const [outcome, setOutcome] = useState<{ label: string; answer?: unknown; error?: unknown }>();
  const act = async (label: string, send: () => Promise<unknown>, then?: () => void) => {
    setOutcome(undefined);
    try {
      const answer = await send();
      setOutcome({ label, answer: answer ?? null });
      // An action may change the resource itself (an experiment started) as well as its related list.
      item.reload();
      related.reload();
      then?.();
    } catch (error) {
      setOutcome({ label, error });
    }
  };
  return (
    <section>
      <p>
        <a href={href('manage', kind.path)}>← {kind.title}</a>
      </p>
      <h1>{resourceKey}</h1>
      <div class="row">
        {kind.actions
          ?.filter((action) => !action.body)
          .map((action) => (
            <button class="quiet" onClick={() => act(action.label, () => action.send(client, resourceKey))}>
              {action.label}
            </button>
          ))}
        {kind.remove && (
          <button
            class="danger"
            onClick={() =>
              act(
                kind.remove!.label,
                () => kind.remove!.send(client, resourceKey),
                () => navigate('manage', kind.path),
              )
            }
          >
            {kind.remove.label}
          </button>
        )}
      </div>
      {outcome?.error !== undefined && <Problem error={outcome.error} />}
      {outcome && outcome.error === undefined && (
        <p class="muted" role="status">
          {outcome.label}: {JSON.stringify(outcome.answer)}
        </p>
      )}
      {kind.actions
        ?.filter((action) => action.body)
        .map((action) => (
          <JsonEditor
            key={action.label}
            title={action.label}
            submitLabel={action.label}
            initial={action.body}
            askName={false}
            send={(body) => action.send(client, resourceKey, body)}
            onSent={related.reload}
            link={action.link}
          />
        ))}
      <Loaded state={item} what={`the ${kind.noun}`}>
        {(value) => (
          <>
            <pre class="block" data-testid="resource">
              {JSON.stringify(value, null, 2)}
            </pre>
            {kind.write?.editable && (
              <JsonEditor
                title={`Edit ${kind.noun}`}
                initial={pick(value, kind.write.editable)}
                askName={false}
                send={(body) => kind.write!.send(client, body, resourceKey)}
                onSent={item.reload}
              />
            )}
          </>
        )}
      </Loaded>
      {kind.related && (
        <>
          <h2>{kind.related.title}</h2>
          <Loaded state={related} what={kind.related.title.toLowerCase()}>
            {(list) =>
              list.length === 0 ? (
                <Empty>None yet.</Empty>
              ) : (
                <Table label={kind.related!.title} columns={kind.related!.columns} rows={list} linkTo={kind.related!.linkTo} />
              )
            }
          </Loaded>
        </>
      )}
    </section>
  );
}
