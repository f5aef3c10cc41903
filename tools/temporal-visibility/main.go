// Command temporal-visibility drops secondary indexes of the Temporal dev server's SQLite
// visibility table (executions_visibility) that no query of this product, its operators or the
// server itself needs at dev scale. Every workflow start and close writes one visibility row, and
// the stock schema keeps 47 indexes over it, most on generated JSON columns: a CPU profile of the
// dev server put a third of its time in those two writes (docs/scaling.md).
//
// The index names come from the caller (tools/stack/visibility-indexes.ts holds the list); each is
// dropped if it exists, in one transaction, so the command is idempotent and safe to run against a
// live server. It prints how many of them it dropped. With -list it only prints the table's
// remaining index names, one per line.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	_ "modernc.org/sqlite"
)

var indexName = regexp.MustCompile(`^by_[a-z0-9_]+$`)

func main() {
	dbFile := flag.String("db", "", "the dev server's SQLite file (--db-filename)")
	drop := flag.String("drop", "", "comma-separated names of executions_visibility indexes to drop")
	list := flag.Bool("list", false, "print the remaining index names instead")
	flag.Parse()
	if *dbFile == "" || (*drop == "") == !*list {
		fail("usage: temporal-visibility -db <file> (-drop <index,...> | -list)")
	}
	if *list {
		names, err := listIndexes(*dbFile)
		if err != nil {
			fail(err.Error())
		}
		fmt.Println(strings.Join(names, "\n"))
		return
	}
	names := strings.Split(*drop, ",")
	for _, name := range names {
		if !indexName.MatchString(name) {
			fail(fmt.Sprintf("not a visibility index name: %q", name))
		}
	}
	dropped, err := dropIndexes(*dbFile, names)
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf("dropped %d of %d visibility indexes\n", dropped, len(names))
}

func open(dbFile string) (*sql.DB, error) {
	if _, err := os.Stat(dbFile); err != nil {
		return nil, err
	}
	return sql.Open("sqlite", "file:"+dbFile+"?_pragma=busy_timeout(15000)&_txlock=immediate")
}

func listIndexes(dbFile string) ([]string, error) {
	db, err := open(dbFile)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

func dropIndexes(dbFile string, names []string) (int, error) {
	db, err := open(dbFile)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	dropped := 0
	for _, name := range names {
		var exists int
		err := tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND name = ?`, name).Scan(&exists)
		if err != nil {
			return 0, err
		}
		if exists == 0 {
			continue
		}
		if _, err := tx.Exec(`DROP INDEX "` + name + `"`); err != nil {
			return 0, fmt.Errorf("drop %s: %w", name, err)
		}
		dropped++
	}
	return dropped, tx.Commit()
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "temporal-visibility:", message)
	os.Exit(2)
}
