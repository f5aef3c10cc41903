package main

// FerretDB v1 on SQLite answers {_id: {$in: [...]}} by reading and decoding the whole collection
// (only {_id: v} is looked up by index): a read of a few documents by their ids costs
// O(collection). This file answers a plain find whose filter is exactly {_id: {$in: [ids]}} with
// one indexed find per id on the backend and returns them all in one reply, so the client sends one
// command and the store reads only the documents asked for. Reads take no lock: a document written
// between two lookups is seen as a find on MongoDB could see it (no snapshot across documents).

import (
	"io"

	"go.mongodb.org/mongo-driver/bson/bsontype"
	"go.mongodb.org/mongo-driver/x/bsonx/bsoncore"
)

// Options of a find that change nothing about which documents it returns or how they are sent.
var idsFindHarmless = map[string]bool{
	"find": true, "filter": true, "$db": true, "lsid": true, "$clusterTime": true, "$readPreference": true,
	"batchSize": true, "maxTimeMS": true, "readConcern": true,
}

// maxIDsPerFind bounds the lookups one command may cost; a larger $in goes to FerretDB as sent.
const maxIDsPerFind = 1000

// resolveFindByIDs returns the reply to a find by a list of ids, or nil to forward req unchanged.
func resolveFindByIDs(req []byte, backend io.ReadWriter) ([]byte, error) {
	m, db, coll, ids, ok := findByIDsOf(req)
	if !ok {
		return nil, nil
	}
	docs := make([]bsoncore.Value, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		key := string(id.Value().Data)
		if seen[key] {
			continue
		}
		seen[key] = true
		doc, err := findByID(backend, db, coll, id)
		if err != nil {
			return nil, err
		}
		if doc != nil {
			docs = append(docs, bsoncore.Value{Type: bsontype.EmbeddedDocument, Data: doc})
		}
	}
	cursor := bsoncore.BuildDocument(nil,
		bsoncore.BuildArrayElement(nil, "firstBatch", docs...),
		bsoncore.AppendInt64Element(nil, "id", 0),
		bsoncore.AppendStringElement(nil, "ns", db+"."+coll),
	)
	reply := &wireMsg{
		requestID: nextRequestID.Add(1),
		body: bsoncore.BuildDocument(nil,
			bsoncore.AppendDocumentElement(nil, "cursor", cursor),
			bsoncore.AppendDoubleElement(nil, "ok", 1),
		),
	}
	return reply.encode(m.requestID), nil
}

// findByIDsOf recognises {find: coll, filter: {_id: {$in: [string or ObjectID ids]}}} with harmless options only.
func findByIDsOf(req []byte) (m *wireMsg, db, coll string, ids []bsoncore.Element, ok bool) {
	m, ok = parseOpMsg(req)
	if !ok || m.flags&flagMoreToCome != 0 || len(m.sequences) != 0 {
		return nil, "", "", nil, false
	}
	elems, err := m.body.Elements()
	if err != nil || len(elems) == 0 || elems[0].Key() != "find" {
		return nil, "", "", nil, false
	}
	for _, e := range elems {
		if !idsFindHarmless[e.Key()] {
			return nil, "", "", nil, false
		}
	}
	var okColl, okDB bool
	coll, okColl = elems[0].Value().StringValueOK()
	db, okDB = m.body.Lookup("$db").StringValueOK()
	filter, okFilter := m.body.Lookup("filter").DocumentOK()
	if !okColl || !okDB || !okFilter {
		return nil, "", "", nil, false
	}
	fElems, err := filter.Elements()
	if err != nil || len(fElems) != 1 || fElems[0].Key() != "_id" {
		return nil, "", "", nil, false
	}
	cond, ok := fElems[0].Value().DocumentOK()
	if !ok {
		return nil, "", "", nil, false
	}
	cElems, err := cond.Elements()
	if err != nil || len(cElems) != 1 || cElems[0].Key() != "$in" {
		return nil, "", "", nil, false
	}
	list, ok := cElems[0].Value().ArrayOK()
	if !ok {
		return nil, "", "", nil, false
	}
	values, err := list.Values()
	if err != nil || len(values) > maxIDsPerFind {
		return nil, "", "", nil, false
	}
	for _, v := range values {
		if v.Type != bsontype.String && v.Type != bsontype.ObjectID {
			return nil, "", "", nil, false
		}
		ids = append(ids, bsoncore.Element(bsoncore.AppendValueElement(nil, "_id", v)))
	}
	return m, db, coll, ids, true
}
