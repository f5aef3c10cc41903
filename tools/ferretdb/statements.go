package main

import (
	"go.mongodb.org/mongo-driver/bson/bsontype"
	"go.mongodb.org/mongo-driver/x/bsonx/bsoncore"
)

// statementsField names the list of statements of a write command that the launcher rewrites.
var statementsField = map[string]string{"update": "updates", "delete": "deletes"}

// statements returns a command's statements, from its body's array or from the document sequence
// the driver sends them in, and where they were found.
func (m *wireMsg) statements(field string) (stmts []bsoncore.Document, inBody bool, seqSlot int, ok bool) {
	if v, err := m.body.LookupErr(field); err == nil {
		arr, ok := v.ArrayOK()
		if !ok {
			return nil, false, 0, false
		}
		values, err := arr.Values()
		if err != nil {
			return nil, false, 0, false
		}
		for _, v := range values {
			doc, ok := v.DocumentOK()
			if !ok {
				return nil, false, 0, false
			}
			stmts = append(stmts, doc)
		}
		return stmts, true, 0, len(stmts) > 0
	}
	seqSlot = -1
	for i, seq := range m.sequences {
		if seq.id == field {
			stmts, seqSlot = seq.docs, i
		}
	}
	return stmts, false, seqSlot, len(stmts) > 0
}

// withStatements is the same command carrying stmts in place of its statements.
func (m *wireMsg) withStatements(field string, inBody bool, seqSlot int, stmts []bsoncore.Document) *wireMsg {
	out := *m
	if inBody {
		values := make([]bsoncore.Value, 0, len(stmts))
		for _, stmt := range stmts {
			values = append(values, bsoncore.Value{Type: bsontype.EmbeddedDocument, Data: stmt})
		}
		bodyElems, _ := m.body.Elements()
		parts := make([][]byte, 0, len(bodyElems))
		for _, e := range bodyElems {
			if e.Key() == field {
				parts = append(parts, bsoncore.BuildArrayElement(nil, field, values...))
			} else {
				parts = append(parts, e)
			}
		}
		out.body = bsoncore.BuildDocument(nil, parts...)
	} else {
		out.sequences = append([]docSequence(nil), m.sequences...)
		out.sequences[seqSlot] = docSequence{id: m.sequences[seqSlot].id, docs: stmts}
	}
	return &out
}
