// Command ferretdb-launcher runs FerretDB v1 with its SQLite backend as a single process.
// It exists because `go install .../cmd/ferretdb` needs a version file the module proxy
// does not ship; the embeddable package has no such requirement.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("data-dir", "data/ferretdb", "directory for the SQLite files")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: cannot create data dir: %v\n", err)
		os.Exit(1)
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		// BEGIN IMMEDIATE: a writer waits (busy_timeout) for the write lock instead of failing with
		// SQLITE_BUSY when its read transaction cannot be upgraded under concurrent writes.
		SQLiteURL: "file:" + abs + "/?_txlock=immediate",
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Fprintf(os.Stderr, "ferretdb-launcher: listening on %s (%s)\n", *listen, f.MongoDBURI())
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}
}
