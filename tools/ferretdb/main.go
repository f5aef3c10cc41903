// Command ferretdb-launcher runs FerretDB v1 with its SQLite backend as a single process.
// It exists because `go install .../cmd/ferretdb` needs a version file the module proxy
// does not ship; the embeddable package has no such requirement. FerretDB itself listens on
// a private loopback port; clients reach it through the write gate (writegate.go).
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

	// The public address is taken first, so a port clash fails here, before FerretDB starts.
	public, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}
	private, err := freeLoopbackAddress()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: private},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	go serveGated(public, private, logger)
	fmt.Fprintf(os.Stderr, "ferretdb-launcher: listening on %s (FerretDB on %s)\n", *listen, private)
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: %v\n", err)
		os.Exit(1)
	}
}

func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
