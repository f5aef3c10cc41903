package main

// FerretDB v1 on SQLite looks a document up by _id only when the filter is exactly {_id: v}; with
// any other key beside _id it reads and decodes the whole collection. A compare-and-set by _id
// ({_id: v, owner: o} to release a lease, {_id: v, fence: n} for a fenced write) would then cost
// O(collection). Under the write lock this file resolves an update or delete whose statements'
// filters are _id plus plain equalities (one statement, or a batch of fenced writes): it reads
// each document by _id, checks the equalities, and forwards the matching statements with {_id: v}
// alone, or answers "matched nothing" itself. Holding the write lock makes the checks and the
// writes one step, as MongoDB's per-document atomicity does.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/bson/bsontype"
	"go.mongodb.org/mongo-driver/x/bsonx/bsoncore"
)

const flagChecksumPresent = 1 << 0

type docSequence struct {
	id   string
	docs []bsoncore.Document
}

type wireMsg struct {
	requestID int32
	flags     uint32
	body      bsoncore.Document
	sequences []docSequence
}

var nextRequestID atomic.Int32

func init() { nextRequestID.Store(1 << 30) }

func parseOpMsg(msg []byte) (*wireMsg, bool) {
	if !isMsg(msg) {
		return nil, false
	}
	m := &wireMsg{requestID: int32(binary.LittleEndian.Uint32(msg[4:8])), flags: msgFlags(msg)}
	if m.flags&flagChecksumPresent != 0 {
		return nil, false
	}
	rest := msg[20:]
	for len(rest) > 0 {
		kind := rest[0]
		rest = rest[1:]
		switch kind {
		case 0:
			doc, rem, ok := bsoncore.ReadDocument(rest)
			if !ok || m.body != nil {
				return nil, false
			}
			m.body, rest = doc, rem
		case 1:
			if len(rest) < 4 {
				return nil, false
			}
			size := int(int32(binary.LittleEndian.Uint32(rest[0:4])))
			if size < 5 || size > len(rest) {
				return nil, false
			}
			section := rest[4:size]
			rest = rest[size:]
			end := bytes.IndexByte(section, 0)
			if end < 0 {
				return nil, false
			}
			seq := docSequence{id: string(section[:end])}
			for docs := section[end+1:]; len(docs) > 0; {
				doc, rem, ok := bsoncore.ReadDocument(docs)
				if !ok {
					return nil, false
				}
				seq.docs, docs = append(seq.docs, doc), rem
			}
			m.sequences = append(m.sequences, seq)
		default:
			return nil, false
		}
	}
	return m, m.body != nil
}

func (m *wireMsg) encode(responseTo int32) []byte {
	out := make([]byte, 20, 64+len(m.body))
	binary.LittleEndian.PutUint32(out[4:8], uint32(m.requestID))
	binary.LittleEndian.PutUint32(out[8:12], uint32(responseTo))
	binary.LittleEndian.PutUint32(out[12:16], opMsg)
	binary.LittleEndian.PutUint32(out[16:20], m.flags)
	out = append(out, 0)
	out = append(out, m.body...)
	for _, seq := range m.sequences {
		start := len(out)
		out = append(out, 1, 0, 0, 0, 0)
		out = append(out, seq.id...)
		out = append(out, 0)
		for _, doc := range seq.docs {
			out = append(out, doc...)
		}
		binary.LittleEndian.PutUint32(out[start+1:start+5], uint32(len(out)-start-1))
	}
	binary.LittleEndian.PutUint32(out[0:4], uint32(len(out)))
	return out
}

// idStmt is one update or delete statement whose filter is _id plus plain equalities (maybe none).
type idStmt struct {
	stmt  bsoncore.Document
	id    bsoncore.Element
	equal []bsoncore.Element
}

// idWrite is an update or delete command all of whose statements are idStmts, at least one of them
// with an equality beside _id (a compare-and-set: a lease release, a fenced write, or a batch of them).
type idWrite struct {
	msg     *wireMsg
	command string
	db      string
	coll    string
	stmts   []idStmt
	inBody  bool
	seqSlot int
}

// resolveByID returns the request to forward (nil: forward req unchanged) or a reply to send
// instead (no statement's document matches), and for a command some of whose statements it
// dropped, how to renumber the backend's reply. Call it holding the write lock.
func resolveByID(req []byte, backend io.ReadWriter) (forward []byte, reply []byte, fix func([]byte) []byte, err error) {
	w, ok := idWriteOf(req)
	if !ok {
		return nil, nil, nil, nil
	}
	var kept []int
	for i, s := range w.stmts {
		if len(s.equal) == 0 {
			kept = append(kept, i)
			continue
		}
		doc, err := findByID(backend, w.db, w.coll, s.id)
		if err != nil {
			return nil, nil, nil, err
		}
		if doc != nil && matches(doc, s.equal) {
			kept = append(kept, i)
		}
	}
	if len(kept) == 0 {
		return nil, w.nothingMatched(), nil, nil
	}
	if len(kept) < len(w.stmts) {
		fix = func(raw []byte) []byte { return renumberWriteErrors(raw, kept) }
	}
	return w.withIDFiltersOnly(kept), nil, fix, nil
}

func idWriteOf(req []byte) (*idWrite, bool) {
	m, ok := parseOpMsg(req)
	if !ok || m.flags&flagMoreToCome != 0 {
		return nil, false
	}
	elems, err := m.body.Elements()
	if err != nil || len(elems) == 0 {
		return nil, false
	}
	w := &idWrite{msg: m, command: elems[0].Key()}
	field := statementsField[w.command]
	if field == "" {
		return nil, false
	}
	var okColl, okDB bool
	w.coll, okColl = elems[0].Value().StringValueOK()
	w.db, okDB = m.body.Lookup("$db").StringValueOK()
	if !okColl || !okDB {
		return nil, false
	}
	stmts, inBody, seqSlot, ok := m.statements(field)
	if !ok {
		return nil, false
	}
	w.inBody, w.seqSlot = inBody, seqSlot
	compareAndSet := false
	for _, doc := range stmts {
		s, ok := idStmtOf(w.command, doc)
		if !ok {
			return nil, false
		}
		compareAndSet = compareAndSet || len(s.equal) > 0
		w.stmts = append(w.stmts, s)
	}
	return w, compareAndSet
}

func idStmtOf(command string, stmt bsoncore.Document) (idStmt, bool) {
	s := idStmt{stmt: stmt}
	if command == "update" && (truthy(stmt, "multi") || truthy(stmt, "upsert")) {
		return s, false
	}
	q, ok := stmt.Lookup("q").DocumentOK()
	if !ok {
		return s, false
	}
	qElems, err := q.Elements()
	if err != nil {
		return s, false
	}
	for _, e := range qElems {
		key := e.Key()
		switch {
		case key == "_id" && (e.Value().Type == bsontype.String || e.Value().Type == bsontype.ObjectID):
			s.id = e
		case plainEquality(key, e.Value()):
			s.equal = append(s.equal, e)
		default:
			return s, false
		}
	}
	return s, s.id != nil
}

func truthy(doc bsoncore.Document, key string) bool {
	b, ok := doc.Lookup(key).BooleanOK()
	return ok && b
}

// plainEquality: a top-level field compared with a scalar, no operator and no dotted path.
func plainEquality(key string, v bsoncore.Value) bool {
	if key == "" || strings.HasPrefix(key, "$") || strings.Contains(key, ".") {
		return false
	}
	switch v.Type {
	case bsontype.String, bsontype.Int32, bsontype.Int64, bsontype.Double, bsontype.Boolean, bsontype.DateTime, bsontype.ObjectID:
		return true
	}
	return false
}

func findByID(backend io.ReadWriter, db, coll string, id bsoncore.Element) (bsoncore.Document, error) {
	find := &wireMsg{
		requestID: nextRequestID.Add(1),
		body: bsoncore.BuildDocument(nil,
			bsoncore.AppendStringElement(nil, "find", coll),
			bsoncore.AppendDocumentElement(nil, "filter", bsoncore.BuildDocument(nil, id)),
			bsoncore.AppendInt64Element(nil, "limit", 1),
			bsoncore.AppendBooleanElement(nil, "singleBatch", true),
			bsoncore.AppendStringElement(nil, "$db", db),
		),
	}
	if _, err := backend.Write(find.encode(0)); err != nil {
		return nil, err
	}
	raw, err := readMessage(backend)
	if err != nil {
		return nil, err
	}
	reply, ok := parseOpMsg(raw)
	if !ok {
		return nil, fmt.Errorf("unreadable reply to find by _id")
	}
	if okValue, _ := asFloat(reply.body.Lookup("ok")); okValue != 1 {
		return nil, fmt.Errorf("find by _id failed: %s", reply.body.String())
	}
	batch, ok := reply.body.Lookup("cursor", "firstBatch").ArrayOK()
	if !ok {
		return nil, fmt.Errorf("find by _id: no firstBatch")
	}
	values, err := batch.Values()
	if err != nil || len(values) == 0 {
		return nil, err
	}
	doc, _ := values[0].DocumentOK()
	return doc, nil
}

func matches(doc bsoncore.Document, equal []bsoncore.Element) bool {
	for _, e := range equal {
		stored, err := doc.LookupErr(e.Key())
		if err != nil || !sameValue(stored, e.Value()) {
			return false
		}
	}
	return true
}

func sameValue(a, b bsoncore.Value) bool {
	if x, ok := asFloat(a); ok {
		y, ok := asFloat(b)
		return ok && x == y
	}
	return a.Type == b.Type && bytes.Equal(a.Data, b.Data)
}

func asFloat(v bsoncore.Value) (float64, bool) {
	switch v.Type {
	case bsontype.Int32, bsontype.Int64:
		n, ok := v.AsInt64OK()
		return float64(n), ok
	case bsontype.Double:
		return v.DoubleOK()
	}
	return 0, false
}

// withIDFiltersOnly is the same request with only the kept statements, each filter cut down to {_id: v}.
func (w *idWrite) withIDFiltersOnly(kept []int) []byte {
	stmts := make([]bsoncore.Document, 0, len(kept))
	for _, i := range kept {
		s := w.stmts[i]
		elems, _ := s.stmt.Elements()
		parts := make([][]byte, 0, len(elems))
		for _, e := range elems {
			if e.Key() == "q" {
				parts = append(parts, bsoncore.AppendDocumentElement(nil, "q", bsoncore.BuildDocument(nil, s.id)))
			} else {
				parts = append(parts, e)
			}
		}
		stmts = append(stmts, bsoncore.BuildDocument(nil, parts...))
	}
	return w.msg.withStatements(statementsField[w.command], w.inBody, w.seqSlot, stmts).encode(0)
}

// renumberWriteErrors maps the writeErrors' indexes of a reply to a request cut down to the kept
// statements back to the statements' places in the client's request.
func renumberWriteErrors(raw []byte, kept []int) []byte {
	reply, ok := parseOpMsg(raw)
	if !ok {
		return raw
	}
	renumbered, ok := reindexed(reply.body.Lookup("writeErrors"), func(i int64) int64 {
		if i >= 0 && int(i) < len(kept) {
			return int64(kept[i])
		}
		return i
	})
	if !ok {
		return raw
	}
	bodyElems, _ := reply.body.Elements()
	parts := make([][]byte, 0, len(bodyElems))
	for _, e := range bodyElems {
		if e.Key() == "writeErrors" {
			parts = append(parts, bsoncore.BuildArrayElement(nil, "writeErrors", renumbered...))
		} else {
			parts = append(parts, e)
		}
	}
	reply.body = bsoncore.BuildDocument(nil, parts...)
	reply.requestID = int32(binary.LittleEndian.Uint32(raw[4:8]))
	return reply.encode(int32(binary.LittleEndian.Uint32(raw[8:12])))
}

// nothingMatched is the server's answer to a write whose filter matched no document.
func (w *idWrite) nothingMatched() []byte {
	fields := [][]byte{bsoncore.AppendInt32Element(nil, "n", 0)}
	if w.command == "update" {
		fields = append(fields, bsoncore.AppendInt32Element(nil, "nModified", 0))
	}
	fields = append(fields, bsoncore.AppendDoubleElement(nil, "ok", 1))
	reply := &wireMsg{requestID: nextRequestID.Add(1), body: bsoncore.BuildDocument(nil, fields...)}
	return reply.encode(w.msg.requestID)
}
