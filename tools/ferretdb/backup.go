package main

// `ferretdb-launcher sqlite-backup <source.sqlite> <target.sqlite>` writes a consistent copy of a
// live SQLite database (the store's files, or Temporal's temporal.db) with VACUUM INTO: one read
// transaction, so the copy is the database at one instant while its owner keeps running.

import (
	"database/sql"
	"fmt"
	"os"
)

func sqliteBackup(source, target string) error {
	if _, err := os.Stat(target); err == nil {
		return fmt.Errorf("%s exists; refusing to overwrite it", target)
	}
	db, err := sql.Open("sqlite", "file:"+source+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`VACUUM INTO ?`, target)
	return err
}

// runSubcommand handles the launcher's subcommands; false when the arguments name none.
func runSubcommand(args []string) bool {
	if len(args) == 0 || args[0] != "sqlite-backup" {
		return false
	}
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ferretdb-launcher sqlite-backup <source.sqlite> <target.sqlite>")
		os.Exit(2)
	}
	if err := sqliteBackup(args[1], args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: sqlite-backup: %v\n", err)
		os.Exit(1)
	}
	return true
}
