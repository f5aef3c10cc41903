package main

// FerretDB v1 keeps each update statement's query iterator, and with it a pooled SQLite
// connection, open until the whole command returns (handler/msg_update.go defers the close inside
// its loop over statements). A command with about as many statements as the pool has connections
// (100) then waits forever for a connection only its own end would free; it holds the write lock
// meanwhile, so the whole store stops answering. The launcher therefore forwards a longer update or
// delete command in parts of at most interleavePart statements, one after another under the write
// lock, each under the backend lock so that inserts queued for SQLite go between two parts (see
// serialize.go), and answers with the replies merged as MongoDB answers the whole command: counts
// summed, upserts and write errors at their places in the client's list, an ordered command
// stopped at its first write error.

import (
	"fmt"
	"io"
	"sync"

	"go.mongodb.org/mongo-driver/bson/bsontype"
	"go.mongodb.org/mongo-driver/x/bsonx/bsoncore"
)

// interleavePart bounds an insert's wait behind a batch end's updates and keeps far below the
// pool's 100 connections. On the launcher's contention check (two writers of 50-statement updates
// beside a stream of inserts) an insert's p99 was 25 ms with whole commands, 9-11 ms with parts of
// 10 and 7-8 ms with parts of 5, and the update commands took as long (p50 ~20 ms) in each.
const interleavePart = 5

// forwardInParts sends req to the backend in parts when it is an update or delete command of more
// than interleavePart statements, each part holding backendLock, and returns the merged reply;
// split is false (and nothing was sent) for any other request. Call it holding the write lock.
func forwardInParts(req []byte, backend io.ReadWriter, backendLock sync.Locker) (reply []byte, split bool, err error) {
	command, _ := commandName(req)
	field := statementsField[command]
	if field == "" {
		return nil, false, nil
	}
	m, ok := parseOpMsg(req)
	if !ok || m.flags&flagMoreToCome != 0 {
		return nil, false, nil
	}
	stmts, inBody, seqSlot, ok := m.statements(field)
	if !ok || len(stmts) <= interleavePart {
		return nil, false, nil
	}
	ordered, isBool := m.body.Lookup("ordered").BooleanOK()
	ordered = ordered || !isBool
	merged := mergedWrite{update: command == "update"}
	for start := 0; start < len(stmts); start += interleavePart {
		part := m.withStatements(field, inBody, seqSlot, stmts[start:min(start+interleavePart, len(stmts))])
		part.requestID = nextRequestID.Add(1)
		raw, err := sendPart(part.encode(0), backend, backendLock)
		if err != nil {
			return nil, true, err
		}
		partReply, ok := parseOpMsg(raw)
		if !ok {
			return nil, true, fmt.Errorf("unreadable reply to part of a %s command", command)
		}
		if okValue, _ := asFloat(partReply.body.Lookup("ok")); okValue != 1 {
			partReply.requestID = nextRequestID.Add(1)
			return partReply.encode(m.requestID), true, nil // a command error: the client sees it as is
		}
		if failed := merged.add(partReply.body, start); failed && ordered {
			break
		}
	}
	return merged.reply(m.requestID), true, nil
}

// sendPart is one request and its reply, holding the backend lock.
func sendPart(req []byte, backend io.ReadWriter, backendLock sync.Locker) ([]byte, error) {
	backendLock.Lock()
	defer backendLock.Unlock()
	if _, err := backend.Write(req); err != nil {
		return nil, err
	}
	return readMessage(backend)
}

// mergedWrite sums the replies of a command's parts.
type mergedWrite struct {
	update              bool
	n, nModified        int64
	upserted, errors    []bsoncore.Value
	writeConcernError   bsoncore.Value
	hasWriteConcernFail bool
}

// add takes one part's reply, whose first statement is the client's statement number offset, and
// tells whether the part had write errors.
func (w *mergedWrite) add(body bsoncore.Document, offset int) bool {
	n, _ := body.Lookup("n").AsInt64OK()
	nModified, _ := body.Lookup("nModified").AsInt64OK()
	w.n, w.nModified = w.n+n, w.nModified+nModified
	w.upserted = append(w.upserted, shiftedIndexes(body.Lookup("upserted"), offset)...)
	errs := shiftedIndexes(body.Lookup("writeErrors"), offset)
	w.errors = append(w.errors, errs...)
	if wce, err := body.LookupErr("writeConcernError"); err == nil && !w.hasWriteConcernFail {
		w.writeConcernError, w.hasWriteConcernFail = wce, true
	}
	return len(errs) > 0
}

func (w *mergedWrite) reply(responseTo int32) []byte {
	fields := [][]byte{bsoncore.AppendInt32Element(nil, "n", int32(w.n))}
	if w.update {
		fields = append(fields, bsoncore.AppendInt32Element(nil, "nModified", int32(w.nModified)))
	}
	if len(w.upserted) > 0 {
		fields = append(fields, bsoncore.BuildArrayElement(nil, "upserted", w.upserted...))
	}
	if len(w.errors) > 0 {
		fields = append(fields, bsoncore.BuildArrayElement(nil, "writeErrors", w.errors...))
	}
	if w.hasWriteConcernFail {
		fields = append(fields, bsoncore.AppendValueElement(nil, "writeConcernError", w.writeConcernError))
	}
	fields = append(fields, bsoncore.AppendDoubleElement(nil, "ok", 1))
	reply := &wireMsg{requestID: nextRequestID.Add(1), body: bsoncore.BuildDocument(nil, fields...)}
	return reply.encode(responseTo)
}

// shiftedIndexes is an array of documents with an "index" field (upserted, writeErrors), each
// index moved by offset; nothing when v is not such an array.
func shiftedIndexes(v bsoncore.Value, offset int) []bsoncore.Value {
	out, _ := reindexed(v, func(i int64) int64 { return i + int64(offset) })
	return out
}

// reindexed is an array of documents with their "index" fields mapped by to; false when v is not
// an array of documents.
func reindexed(v bsoncore.Value, to func(int64) int64) ([]bsoncore.Value, bool) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, false
	}
	values, err := arr.Values()
	if err != nil {
		return nil, false
	}
	out := make([]bsoncore.Value, 0, len(values))
	for _, v := range values {
		doc, ok := v.DocumentOK()
		if !ok {
			return nil, false
		}
		elems, _ := doc.Elements()
		parts := make([][]byte, 0, len(elems))
		for _, e := range elems {
			if i, ok := e.Value().AsInt64OK(); ok && e.Key() == "index" {
				parts = append(parts, bsoncore.AppendInt32Element(nil, "index", int32(to(i))))
			} else {
				parts = append(parts, e)
			}
		}
		out = append(out, bsoncore.Value{Type: bsontype.EmbeddedDocument, Data: bsoncore.BuildDocument(nil, parts...)})
	}
	return out, true
}
