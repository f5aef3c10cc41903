package main

// FerretDB v1 runs update, findAndModify and delete as "query, then write" without a transaction
// (FerretDB issue #3040), so two concurrent updates of one document can lose one of them: a
// conditional $inc is then neither conditional nor an increment. The service relies on
// single-document atomic updates (credit holds, daily spend, rate limits), as MongoDB gives them.
// So the launcher listens in front of FerretDB and lets one write command through at a time;
// everything else passes untouched. Writes are serialized by SQLite anyway, so this costs little.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"
)

const (
	opMsg          = 2013
	flagMoreToCome = 1 << 1
	maxMessage     = 48 * 1024 * 1024
)

var writeCommands = map[string]bool{"insert": true, "update": true, "delete": true, "findandmodify": true}

// writeGate admits one write command at a time, from any connection.
type writeGate chan struct{}

func (g writeGate) enter() { g <- struct{}{} }
func (g writeGate) leave() { <-g }

func readMessage(r io.Reader) ([]byte, error) {
	var header [4]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(header[:]))
	if n < 16 || n > maxMessage {
		return nil, errors.New("bad wire message length")
	}
	msg := make([]byte, n)
	copy(msg, header[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}

// commandName is the first key of an OP_MSG's body section, or "" for anything else.
func commandName(msg []byte) string {
	if binary.LittleEndian.Uint32(msg[12:16]) != opMsg || len(msg) < 21 {
		return ""
	}
	for i := 20; i < len(msg); {
		kind := msg[i]
		i++
		if i+4 > len(msg) {
			return ""
		}
		size := int(binary.LittleEndian.Uint32(msg[i : i+4]))
		if kind == 0 {
			// BSON document: int32 size, then elements of type byte + NUL-terminated name.
			start := i + 5
			if start >= len(msg) {
				return ""
			}
			end := start
			for end < len(msg) && msg[end] != 0 {
				end++
			}
			return strings.ToLower(string(msg[start:end]))
		}
		i += size
	}
	return ""
}

func isWrite(msg []byte) bool {
	flags := binary.LittleEndian.Uint32(msg[16:20])
	return flags&flagMoreToCome == 0 && writeCommands[commandName(msg)]
}

// conn relays one client connection. A write's gate is left when its reply passes back (or the
// connection ends), so the next write starts only after this one finished.
type conn struct {
	gate    writeGate
	mu      sync.Mutex
	pending map[int32]bool
}

func (c *conn) admitted(requestID int32) {
	c.mu.Lock()
	c.pending[requestID] = true
	c.mu.Unlock()
}

func (c *conn) answered(responseTo int32) {
	c.mu.Lock()
	held := c.pending[responseTo]
	delete(c.pending, responseTo)
	c.mu.Unlock()
	if held {
		c.gate.leave()
	}
}

func (c *conn) closeAll() {
	c.mu.Lock()
	n := len(c.pending)
	c.pending = map[int32]bool{}
	c.mu.Unlock()
	for ; n > 0; n-- {
		c.gate.leave()
	}
}

func dialUpstream(addr string) (net.Conn, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		up, err := net.Dial("tcp", addr)
		if err == nil || time.Now().After(deadline) {
			return up, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func relay(client net.Conn, upstreamAddr string, gate writeGate, logger *slog.Logger) {
	defer client.Close()
	up, err := dialUpstream(upstreamAddr)
	if err != nil {
		logger.Error("ferretdb upstream unreachable", "error", err)
		return
	}
	defer up.Close()
	c := &conn{gate: gate, pending: map[int32]bool{}}
	defer c.closeAll()

	done := make(chan struct{})
	go func() {
		defer close(done)
		defer client.Close()
		r := bufio.NewReader(up)
		for {
			msg, err := readMessage(r)
			if err != nil {
				return
			}
			c.answered(int32(binary.LittleEndian.Uint32(msg[8:12])))
			if _, err := client.Write(msg); err != nil {
				return
			}
		}
	}()

	r := bufio.NewReader(client)
	for {
		msg, err := readMessage(r)
		if err != nil {
			break
		}
		if isWrite(msg) {
			gate.enter()
			c.admitted(int32(binary.LittleEndian.Uint32(msg[4:8])))
		}
		if _, err := up.Write(msg); err != nil {
			break
		}
	}
	up.Close()
	<-done
}

// serveGated accepts clients on `listen` and relays them to FerretDB at `upstreamAddr`.
func serveGated(ln net.Listener, upstreamAddr string, logger *slog.Logger) {
	gate := make(writeGate, 1)
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		go relay(client, upstreamAddr, gate, logger)
	}
}
