import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { Empty, Loaded, Problem, Table, formatTime, useLoaded, type Column } from '../ui.js';

type ScoreKind = 'Numeric' | 'Boolean' | 'Categorical';
type Score = Awaited<ReturnType<HangarClient['runs']['listFeedback']>>[number];

const shownValue = (score: Score) =>
  score.kind === 'Categorical'
    ? (score.textValue ?? '—')
    : score.kind === 'Boolean'
      ? score.value === 1
        ? 'yes'
        : 'no'
      : String(score.value);

/** A run's scores, human and evaluator ones in one list, with a form to add one (the same name by the same author updates it). */
export function RunFeedback({ client, runId }: { client: HangarClient; runId: string }) {
  const scores = useLoaded(() => client.runs.listFeedback(runId), [client, runId]);
  const [name, setName] = useState('');
  const [kind, setKind] = useState<ScoreKind>('Numeric');
  const [value, setValue] = useState('');
  const [comment, setComment] = useState('');
  const [error, setError] = useState<unknown>();

  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    // The value goes as typed: the API says what it refuses, and why.
    const scored = kind === 'Categorical' ? { textValue: value } : { value: value.trim() === '' ? undefined : Number(value) };
    try {
      await client.runs.saveFeedback(runId, { name, kind, ...scored, ...(comment && { comment }) });
      setValue('');
      setComment('');
      scores.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  const remove = async (scoreId: string) => {
    setError(undefined);
    try {
      await client.runs.deleteFeedback(runId, scoreId);
      scores.reload();
    } catch (failure) {
      setError(failure);
    }
  };

  const columns: Column<Score>[] = [
    { label: 'Name', value: (score) => score.name },
    { label: 'Value', value: shownValue },
    { label: 'Source', value: (score) => score.source },
    { label: 'Author', value: (score) => score.author },
    { label: 'Comment', value: (score) => score.comment ?? '' },
    { label: 'Updated', value: (score) => formatTime(score.updatedAt) },
    {
      label: '',
      isAction: true,
      value: (score) => (
        <button class="quiet small" aria-label={`Delete score ${score.name}`} onClick={() => remove(score.id)}>
          Delete
        </button>
      ),
    },
  ];

  return (
    <>
      <Loaded state={scores} what="the scores">
        {(list) =>
          list.length === 0 ? (
            <Empty>No score yet.</Empty>
          ) : (
            <Table label="Scores" columns={columns} rows={list} rowKey={(score) => score.id} />
          )
        }
      </Loaded>
      <form class="card" onSubmit={save} aria-label="Add a score">
        <div class="row">
          <label>
            Score name
            <input value={name} placeholder="overall" onInput={(event) => setName(event.currentTarget.value)} />
          </label>
          <label>
            Kind
            <select value={kind} onChange={(event) => setKind(event.currentTarget.value as ScoreKind)}>
              <option>Numeric</option>
              <option>Boolean</option>
              <option>Categorical</option>
            </select>
          </label>
          <label>
            {kind === 'Categorical' ? 'Category' : kind === 'Boolean' ? 'Value (1 yes, 0 no)' : 'Value'}
            <input
              value={value}
              inputMode={kind === 'Categorical' ? 'text' : 'decimal'}
              onInput={(event) => setValue(event.currentTarget.value)}
            />
          </label>
        </div>
        <label>
          Comment
          <input value={comment} onInput={(event) => setComment(event.currentTarget.value)} />
        </label>
        <div class="row">
          <button type="submit">Save score</button>
        </div>
        {error !== undefined && <Problem error={error} />}
      </form>
    </>
  );
}
