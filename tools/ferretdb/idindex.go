package main

// FerretDB v1.24 creates each collection's _id index on the expression `_ferretdb_sjson->"_id"`
// but looks documents up by `_ferretdb_sjson->'$._id'`. SQLite matches expression indexes by the
// expression's text, so every find, update and delete by _id scans the whole table: a lookup
// costs O(documents), and the store slows down as data grows. This adds, beside FerretDB's own,
// an index on the exact expression its queries use (EXPLAIN QUERY PLAN then says SEARCH ... USING
// INDEX). FerretDB does not know about the extra index; it is dropped with its table.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const idIndexSuffix = "__id_lookup"

// keepIDIndexes checks every database file in dataDir every interval until ctx ends.
func keepIDIndexes(ctx context.Context, dataDir string, interval time.Duration) {
	open := map[string]*sql.DB{}
	defer func() {
		for _, db := range open {
			db.Close()
		}
	}()
	for {
		files, _ := filepath.Glob(filepath.Join(dataDir, "*.sqlite"))
		for _, file := range files {
			db, ok := open[file]
			if !ok {
				var err error
				db, err = sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)")
				if err != nil {
					fmt.Fprintf(os.Stderr, "ferretdb-launcher: id indexes: %v\n", err)
					continue
				}
				db.SetMaxOpenConns(1)
				open[file] = db
			}
			if err := ensureIDIndexes(ctx, db); err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "ferretdb-launcher: id indexes in %s: %v\n", filepath.Base(file), err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// ensureIDIndexes creates the lookup index of every collection table that lacks it.
func ensureIDIndexes(ctx context.Context, db *sql.DB) error {
	tables, err := strings1(ctx, db, `SELECT table_name FROM _ferretdb_collections`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil // a database FerretDB has not finished creating
		}
		return err
	}
	indexes, err := strings1(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'index'`)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, name := range indexes {
		have[name] = true
	}
	for _, table := range tables {
		if have[table+idIndexSuffix] {
			continue
		}
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, table+idIndexSuffix, table)
		if _, err := db.ExecContext(ctx, q); err != nil && !strings.Contains(err.Error(), "no such table") {
			return err
		}
	}
	return nil
}

func strings1(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
