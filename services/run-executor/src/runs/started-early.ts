/**
 * A generator whose first step starts now, read later as if it had not started: a run's model
 * turns send their first request while the run's row is written. A first step that fails before
 * anyone reads it is not an unhandled rejection; reading it still throws.
 */
export function startedEarly<T, R>(generator: AsyncGenerator<T, R>): AsyncGenerator<T, R> {
  let first: Promise<IteratorResult<T, R>> | undefined = generator.next();
  first.catch(() => undefined);
  const early: AsyncGenerator<T, R> = {
    next(...args) {
      const step = first ?? generator.next(...args);
      first = undefined;
      return step;
    },
    return: (value) => ((first = undefined), generator.return(value)),
    throw: (error) => ((first = undefined), generator.throw(error)),
    [Symbol.asyncIterator]: () => early,
  };
  return early;
}
