// Command ferretdb-launcher runs FerretDB v1 with its SQLite backend as a single process, or with
// its PostgreSQL backend (-backend postgresql, the URL in FERRETDB_POSTGRESQL_URL so that the
// password stays out of argv) for the cluster topology.
// It exists because `go install .../cmd/ferretdb` needs a version file the module proxy
// does not ship; the embeddable package has no such requirement. FerretDB itself listens on a
// private Unix socket; clients reach it through serialize.go's proxy on the TCP address.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if runSubcommand(os.Args[1:]) {
		return
	}
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("data-dir", "data/ferretdb", "directory for the SQLite files")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	synchronous := flag.String("synchronous", "normal", "SQLite synchronous: normal (WAL, fsync at checkpoints) or full (fsync per commit)")
	backend := flag.String("backend", "sqlite", "sqlite, or postgresql (URL from FERRETDB_POSTGRESQL_URL)")
	flag.Parse()
	postgresURL := os.Getenv("FERRETDB_POSTGRESQL_URL")
	if *backend != "sqlite" && (*backend != "postgresql" || postgresURL == "") {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: -backend must be sqlite, or postgresql with FERRETDB_POSTGRESQL_URL set; got %q\n", *backend)
		os.Exit(2)
	}
	servePprofIfAsked()
	if *synchronous != "normal" && *synchronous != "full" {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: -synchronous must be normal or full, got %q\n", *synchronous)
		os.Exit(2)
	}

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

	socket := filepath.Join(os.TempDir(), fmt.Sprintf("ferretdb-launcher-%d.sock", os.Getpid()))
	_ = os.Remove(socket)
	defer os.Remove(socket)
	front, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}

	config := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{Unix: socket},
		Logger:   logger,
		Handler:  "sqlite",
		// BEGIN IMMEDIATE: a writer waits (busy_timeout) for the write lock instead of failing with
		// SQLITE_BUSY when its read transaction cannot be upgraded under concurrent writes.
		SQLiteURL: "file:" + abs + "/?_txlock=immediate&_pragma=synchronous(" + *synchronous + ")",
	}
	if *backend == "postgresql" {
		config.Handler, config.SQLiteURL, config.PostgreSQLURL = "postgresql", "", postgresURL
	}
	f, err := ferretdb.New(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	go func() {
		<-ctx.Done()
		front.Close()
	}()
	if *backend == "sqlite" {
		go keepIDIndexes(ctx, abs, 2*time.Second)
	} else {
		go keepPostgresLookupIndexes(ctx, postgresURL, 2*time.Second)
	}
	go func() {
		if err := serveSerialized(front, func() (net.Conn, error) { return net.Dial("unix", socket) }); err != nil {
			fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
			os.Exit(1)
		}
	}()

	fmt.Fprintf(os.Stderr, "ferretdb-launcher: listening on %s (mongodb://%s/)\n", *listen, *listen)
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}
}
