package main

// FerretDB v1 applies update, findAndModify and delete as a read, then a separate write by _id,
// with no lock between them: two concurrent updates of one document each read the old version
// and the second write silently undoes the first ($inc lost, $unset field back). MongoDB makes
// every single-document write atomic, and the product's store relies on that (credit holds and
// debt, rate-limit buckets). This front proxy restores it: commands that may write go to FerretDB
// one at a time, across all client connections; reads pass concurrently, and inserts take a lock
// of their own (below).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

const (
	opMsg          = 2013
	flagMoreToCome = 1 << 1
	maxMessageSize = 48 * 1024 * 1024
)

// Commands that never write: everything else is serialized.
var readOnly = map[string]bool{
	"find": true, "getMore": true, "aggregate": true, "count": true, "distinct": true, "explain": true,
	"hello": true, "isMaster": true, "ismaster": true, "ping": true, "buildInfo": true, "buildinfo": true,
	"listCollections": true, "listIndexes": true, "listDatabases": true, "killCursors": true, "endSessions": true,
	"saslStart": true, "saslContinue": true, "connectionStatus": true, "serverStatus": true, "dbStats": true,
	"collStats": true, "dataSize": true, "getParameter": true, "getCmdLineOpts": true, "getLog": true,
	"hostInfo": true, "whatsmyuri": true, "getFreeMonitoringStatus": true, "listCommands": true, "usersInfo": true,
}

// Writes that need no serializing with the others. An insert only creates documents: it cannot
// undo a concurrent write, and the backend's unique indexes (SQLite's, checked inside its own
// write transaction) decide a race between two inserts of one key. So inserts skip the write lock:
// a capture, whose writes are all inserts, does not wait behind a batch end's update command of
// many statements, which holds the write lock from its first statement to its last.
//
// SQLite still has one writer, and a writer that finds it busy sleeps in growing steps (1, 2, 5,
// 10, 15, 20 ms ... up to 100 ms, its busy handler) while the other keeps the lock through its next
// statement: an insert beside a batch end's updates waited 20-60 ms in the launcher's contention
// check, and 100-160 ms at the 99th percentile of captures in the bench. So every write that
// reaches the backend takes the backend lock first (an insert for its command, an update or delete
// for each part of at most interleavePart statements): writers queue in the launcher, one at a
// time, and meet inside SQLite only the launcher's own index upkeep (idindex.go, when a collection
// is new). The lock spans FerretDB's whole handling of a statement, so a write whose filter is not
// by _id holds it while FerretDB scans the collection: ours run on small collections (rate-limit
// slots, spent tokens, the shards' board). Letting every insert contend at once had collapsed
// throughput under overload (capture tails of 20 s at 4x the peak, against 3 s).
var insertCommands = map[string]bool{"insert": true}

// serveSerialized accepts clients on front and relays each to a fresh connection to the backend.
func serveSerialized(front net.Listener, dialBackend func() (net.Conn, error)) error {
	locks := &writeLocks{backend: newFifoLock()}
	for {
		client, err := front.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go func() {
			defer client.Close()
			backend, err := dialBackend()
			if err != nil {
				fmt.Fprintf(os.Stderr, "ferretdb-launcher: backend unreachable: %v\n", err)
				return
			}
			defer backend.Close()
			_ = relay(client, backend, locks)
		}()
	}
}

// relay passes request/reply exchanges until either side closes; the driver sends one request at a time per connection.
func relay(client, backend net.Conn, locks *writeLocks) error {
	for {
		req, err := readMessage(client)
		if err != nil {
			return err
		}
		if err := exchange(req, client, backend, locks); err != nil {
			return err
		}
	}
}

// writeLocks: others serializes the writes other than inserts for the whole command (atomic
// read-then-write); backend admits one writer at a time to SQLite (see insertCommands).
type writeLocks struct {
	others  sync.Mutex
	backend fifoLock
}

// fifoLock admits waiters in arrival order (a channel's queue of blocked senders is first in, first
// out). A sync.Mutex lets the running goroutine take it again ahead of a woken waiter, so the next
// part of an update command would pass an insert that had been waiting for the current one.
type fifoLock chan struct{}

func newFifoLock() fifoLock { return make(fifoLock, 1) }
func (l fifoLock) Lock()    { l <- struct{}{} }
func (l fifoLock) Unlock()  { <-l }

func exchange(req []byte, client, backend net.Conn, locks *writeLocks) error {
	var fix func([]byte) []byte
	if isInsert(req) {
		locks.backend.Lock()
		defer locks.backend.Unlock()
	} else if mayWrite(req) {
		locks.others.Lock()
		defer locks.others.Unlock()
		forward, reply, fixReply, err := resolveByID(req, backend)
		if err != nil {
			return err
		}
		if reply != nil {
			_, err := client.Write(reply)
			return err
		}
		if forward != nil {
			req, fix = forward, fixReply
		}
		merged, split, err := forwardInParts(req, backend, locks.backend)
		if err != nil {
			return err
		}
		if split {
			if fix != nil {
				merged = fix(merged)
			}
			_, err := client.Write(merged)
			return err
		}
		locks.backend.Lock()
		defer locks.backend.Unlock()
	} else {
		reply, err := resolveFindByIDs(req, backend)
		if err != nil {
			return err
		}
		if reply != nil {
			_, err := client.Write(reply)
			return err
		}
	}
	if _, err := backend.Write(req); err != nil {
		return err
	}
	if isMsg(req) && msgFlags(req)&flagMoreToCome != 0 {
		return nil // fire-and-forget: no reply comes
	}
	for {
		reply, err := readMessage(backend)
		if err != nil {
			return err
		}
		if fix != nil {
			reply = fix(reply)
		}
		if _, err := client.Write(reply); err != nil {
			return err
		}
		if !isMsg(reply) || msgFlags(reply)&flagMoreToCome == 0 {
			return nil
		}
	}
}

func readMessage(r io.Reader) ([]byte, error) {
	var header [16]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, err
	}
	size := int(int32(binary.LittleEndian.Uint32(header[0:4])))
	if size < 16 || size > maxMessageSize {
		return nil, fmt.Errorf("bad wire message length %d", size)
	}
	msg := make([]byte, size)
	copy(msg, header[:])
	if _, err := io.ReadFull(r, msg[16:]); err != nil {
		return nil, err
	}
	return msg, nil
}

func isMsg(msg []byte) bool {
	return len(msg) >= 20 && binary.LittleEndian.Uint32(msg[12:16]) == opMsg
}

func msgFlags(msg []byte) uint32 {
	return binary.LittleEndian.Uint32(msg[16:20])
}

// mayWrite is false only for an OP_MSG whose command is known read-only; anything unparsable counts as a write.
func mayWrite(msg []byte) bool {
	name, ok := commandName(msg)
	return !ok || !readOnly[name]
}

// isInsert tells an insert command (its own lock) from the other writes.
func isInsert(msg []byte) bool {
	name, ok := commandName(msg)
	return ok && insertCommands[name]
}

// commandName is the first key of the OP_MSG body (section kind 0).
func commandName(msg []byte) (string, bool) {
	if !isMsg(msg) {
		return "", false
	}
	sections := msg[20:]
	for len(sections) > 0 {
		kind := sections[0]
		sections = sections[1:]
		switch kind {
		case 0:
			// BSON document: int32 length, then the first element's type byte and its cstring key.
			if len(sections) < 6 || sections[4] == 0 {
				return "", false
			}
			end := bytes.IndexByte(sections[5:], 0)
			if end < 0 {
				return "", false
			}
			return string(sections[5 : 5+end]), true
		case 1:
			if len(sections) < 4 {
				return "", false
			}
			size := int(int32(binary.LittleEndian.Uint32(sections[0:4])))
			if size < 4 || size > len(sections) {
				return "", false
			}
			sections = sections[size:]
		default:
			return "", false
		}
	}
	return "", false
}
