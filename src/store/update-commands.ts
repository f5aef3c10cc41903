/**
 * Statements per update command. FerretDB v1 keeps each statement's cursor (and its SQLite
 * connection) open until the whole command ends (handler/msg_update.go closes them in a deferred
 * call inside its loop), so one command with as many statements as its connection pool (100)
 * deadlocks the store: the next statement waits for a connection that only the command's own end
 * would free, while it holds the launcher's write lock. Seen under load as a store that stops
 * answering; kept well below the pool. The embedded launcher now also forwards a longer command in
 * parts (tools/ferretdb/parts.go), so any client is safe there; chunking here still bounds how long
 * one command holds the write lock, and keeps an operator's own FerretDB safe.
 */
export const MAX_UPDATES_PER_COMMAND = 50;
