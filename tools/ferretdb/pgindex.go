package main

// FerretDB v1.24 on PostgreSQL keeps each collection's indexes as btrees over `_jsonb -> 'field'`,
// but pushes an equality filter down as containment, `_jsonb -> $1 @> $2`, which no btree answers:
// every find by _id (and by any other indexed field) read the whole table, so a lookup cost
// O(documents) and the cluster's store slowed as data grew (EXPLAIN: Seq Scan, cost 27,621 on
// 4,000 payments). This mirrors each of FerretDB's btree indexes with a GIN index (jsonb_path_ops,
// which answers @>) over the same expressions; EXPLAIN then says Bitmap Index Scan. The queries are
// planned with their values (plan_cache_mode=force_custom_plan in the store's URL), so the
// parameter `$1` becomes the literal field name the index expression holds. FerretDB does not know
// about the extra indexes; each goes with its table. Uniqueness stays with FerretDB's btrees.

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

const pgLookupSuffix = "_gin"

// FerretDB's key expressions, as pg_get_indexdef prints them: `(_jsonb -> 'field'::text)`.
var ferretKeyExpr = regexp.MustCompile(`^\(_jsonb -> '[^']+'::text\)$`)

type pgIndex struct {
	schema, table, name string
	keys                []string
}

// keepPostgresLookupIndexes mirrors missing lookup indexes every interval until ctx ends.
func keepPostgresLookupIndexes(ctx context.Context, url string, interval time.Duration) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for {
		if conn == nil || conn.IsClosed() {
			c, err := pgx.Connect(ctx, url)
			if err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "ferretdb-launcher: lookup indexes: %v\n", err)
			}
			conn = c
		}
		if conn != nil {
			if err := ensureLookupIndexes(ctx, conn); err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "ferretdb-launcher: lookup indexes: %v\n", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// ensureLookupIndexes drops a mirror whose concurrent build failed (left invalid), then builds the
// mirror of every FerretDB btree index that lacks one.
func ensureLookupIndexes(ctx context.Context, conn *pgx.Conn) error {
	invalid, err := invalidMirrors(ctx, conn)
	if err != nil {
		return err
	}
	for _, name := range invalid {
		if _, err := conn.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return err
		}
	}
	indexes, err := ferretBtreeIndexes(ctx, conn)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, ix := range indexes {
		have[ix.schema+"."+ix.name] = true
	}
	for _, ix := range indexes {
		if strings.HasSuffix(ix.name, pgLookupSuffix) || have[ix.schema+"."+mirrorName(ix.name)] {
			continue
		}
		if q, ok := mirrorStatement(ix); ok {
			if _, err := conn.Exec(ctx, q); err != nil && !strings.Contains(err.Error(), "does not exist") {
				return err
			}
		}
	}
	return nil
}

// mirrorName is FerretDB's index name with `_idx` swapped for `_gin` (same length, within
// PostgreSQL's 63), or the name with `_gin` appended, cut to fit.
func mirrorName(name string) string {
	if base, ok := strings.CutSuffix(name, "_idx"); ok {
		return base + pgLookupSuffix
	}
	if len(name) > 63-len(pgLookupSuffix) {
		name = name[:63-len(pgLookupSuffix)]
	}
	return name + pgLookupSuffix
}

// mirrorStatement is the GIN index over ix's key expressions, or false when one of them is not a
// FerretDB field expression (the record-id column of a capped collection, say).
func mirrorStatement(ix pgIndex) (string, bool) {
	if len(ix.keys) == 0 {
		return "", false
	}
	cols := make([]string, len(ix.keys))
	for i, k := range ix.keys {
		if !ferretKeyExpr.MatchString(k) {
			return "", false
		}
		cols[i] = k + " jsonb_path_ops"
	}
	target := pgx.Identifier{ix.schema, ix.table}.Sanitize()
	name := pgx.Identifier{mirrorName(ix.name)}.Sanitize()
	return fmt.Sprintf(`CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON %s USING gin (%s)`, name, target, strings.Join(cols, ", ")), true
}

// ferretBtreeIndexes lists the btree and GIN indexes of tables with FerretDB's `_jsonb` column,
// with their key expressions.
func ferretBtreeIndexes(ctx context.Context, conn *pgx.Conn) ([]pgIndex, error) {
	rows, err := conn.Query(ctx, `
		SELECT n.nspname, t.relname, i.relname,
		       array(SELECT pg_get_indexdef(x.indexrelid, k, true) FROM generate_series(1, x.indnkeyatts) AS k ORDER BY k)
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		JOIN pg_am a ON a.oid = i.relam
		WHERE a.amname IN ('btree', 'gin')
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		  AND EXISTS (SELECT 1 FROM pg_attribute c WHERE c.attrelid = t.oid AND c.attname = '_jsonb' AND NOT c.attisdropped)`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []pgIndex
	for rows.Next() {
		var ix pgIndex
		if err := rows.Scan(&ix.schema, &ix.table, &ix.name, &ix.keys); err != nil {
			return nil, err
		}
		out = append(out, ix)
	}
	return out, rows.Err()
}

// invalidMirrors names (schema-qualified, quoted) the mirrors a failed concurrent build left invalid.
func invalidMirrors(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `
		SELECT n.nspname, i.relname FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_namespace n ON n.oid = i.relnamespace
		WHERE NOT x.indisvalid AND right(i.relname, length($1)) = $1`, pgLookupSuffix)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var schema, name string
		if err := rows.Scan(&schema, &name); err != nil {
			return nil, err
		}
		out = append(out, pgx.Identifier{schema, name}.Sanitize())
	}
	return out, rows.Err()
}
