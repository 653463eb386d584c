import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';

/**
 * PostgreSQL's text cannot hold U+0000. Input from clients is refused at the gateway; text that
 * reaches a store from elsewhere (a model's answer, a tool's result) has each NUL replaced by U+FFFD
 * here, in every string parameter of every query, rather than failing the write.
 */
const withoutNul = (compiled: CompiledQuery): CompiledQuery =>
  compiled.parameters.some((value) => typeof value === 'string' && value.includes('\u0000'))
    ? {
        ...compiled,
        parameters: compiled.parameters.map((value) => (typeof value === 'string' ? value.replaceAll('\u0000', '\ufffd') : value)),
      }
    : compiled;

class NulSafeConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return this.inner.executeQuery<R>(withoutNul(compiled));
  }

  streamQuery<R>(compiled: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(withoutNul(compiled), chunkSize);
  }
}

class NulSafeDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init = () => this.inner.init();
  destroy = () => this.inner.destroy();
  acquireConnection = async () => new NulSafeConnection(await this.inner.acquireConnection());
  beginTransaction = (connection: DatabaseConnection, settings: TransactionSettings) =>
    this.inner.beginTransaction((connection as NulSafeConnection).inner, settings);
  commitTransaction = (connection: DatabaseConnection) => this.inner.commitTransaction((connection as NulSafeConnection).inner);
  rollbackTransaction = (connection: DatabaseConnection) => this.inner.rollbackTransaction((connection as NulSafeConnection).inner);
  releaseConnection = (connection: DatabaseConnection) => this.inner.releaseConnection((connection as NulSafeConnection).inner);
  savepoint = (connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) =>
    this.inner.savepoint!(connection, name, compile);
  rollbackToSavepoint = (connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) =>
    this.inner.rollbackToSavepoint!(connection, name, compile);
  releaseSavepoint = (connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) =>
    this.inner.releaseSavepoint!(connection, name, compile);
}

/** `inner` with NUL characters in string parameters stored as U+FFFD. */
export function withNulReplaced(inner: Dialect): Dialect {
  return {
    createDriver: () => new NulSafeDriver(inner.createDriver()),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => inner.createIntrospector(db),
  };
}
