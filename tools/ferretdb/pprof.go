package main

// FERRETDB_PPROF_ADDR=127.0.0.1:<port> serves Go's CPU and heap profiles for performance work
// (go tool pprof http://<addr>/debug/pprof/profile?seconds=20). Off unless set; loopback only.

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

func servePprofIfAsked() {
	addr := os.Getenv("FERRETDB_PPROF_ADDR")
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(os.Stderr, "ferretdb-launcher: FERRETDB_PPROF_ADDR must be a loopback host:port, got %q\n", addr)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	go func() {
		if err := http.ListenAndServe(addr, mux); err != nil {
			fmt.Fprintf(os.Stderr, "ferretdb-launcher: pprof: %v\n", err)
		}
	}()
}
