// Package file is the file sink: each alert's JSON envelope appended as
// one line (JSON Lines) and fsync'd before the alert counts as delivered.
//
// The file is opened, created if need be, when the sink is built, so an
// unwritable path fails at start. Opening also repairs and reads the
// file's end: a line torn by a crash during a write is cut off, and the id
// of the last complete line is remembered. Since the Deliverer hands one
// sink its alerts in log order, the only alert that can come again after
// a restart is that last one, and the sink skips it: delivery to a file is
// exactly once.
package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/interlockhq/interlock/internal/alert"
)

// Config configures a Sink.
type Config struct {
	Name string // default "file:<path>"
	Path string
}

// Sink appends alerts to a file.
type Sink struct {
	name string
	path string

	mu     sync.Mutex
	f      *os.File
	size   int64  // of the file after the last complete line we know of
	lastID string // event id of the last complete line
}

var _ alert.Sink = (*Sink)(nil)

// tailScan is how much of the file's end is read to find its last line.
const tailScan = 1 << 20

// Open opens (or creates) the file for appending and checks it is
// writable.
func Open(c Config) (*Sink, error) {
	if c.Path == "" {
		return nil, errors.New("file sink: a path is required")
	}
	f, err := os.OpenFile(c.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("file sink: %w", err)
	}
	s := &Sink{name: c.Name, path: c.Path, f: f}
	if s.name == "" {
		s.name = "file:" + c.Path
	}
	if err := s.recoverTail(); err != nil {
		f.Close()
		return nil, fmt.Errorf("file sink %s: %w", c.Path, err)
	}
	return s, nil
}

// recoverTail cuts a torn last line and reads the last line's event id.
// Only a regular file has an end to look at (a FIFO or a device does not).
func (s *Sink) recoverTail() error {
	st, err := s.f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return nil
	}
	size := st.Size()
	s.size = size
	if size == 0 {
		return nil
	}
	off := max(0, size-tailScan)
	buf := make([]byte, size-off)
	if _, err := s.f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	end := bytes.LastIndexByte(buf, '\n') + 1 // just after the last complete line; 0: none in the scan
	if end == 0 && off > 0 {
		return nil // one line longer than the scan: leave it alone
	}
	if torn := int64(len(buf) - end); torn > 0 {
		if err := s.f.Truncate(off + int64(end)); err != nil {
			return fmt.Errorf("cut a torn last line: %w", err)
		}
		if err := s.f.Sync(); err != nil {
			return err
		}
		s.size = off + int64(end)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf[:end], []byte("\n")), []byte("\n"))
	var last struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(lines[len(lines)-1], &last) == nil {
		s.lastID = last.ID
	}
	return nil
}

// Name implements alert.Sink.
func (s *Sink) Name() string { return s.name }

// Deliver implements alert.Sink. A failed write or fsync is retried (a
// full disk may be freed); the partial line is cut off first so a retry
// does not leave a broken line.
func (s *Sink) Deliver(_ context.Context, a alert.Alert) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return false, fmt.Errorf("file sink %s: closed", s.path)
	}
	if a.Event.ID != "" && a.Event.ID == s.lastID {
		return false, nil // written before a restart: the line is there
	}
	line, err := json.Marshal(a.Envelope())
	if err != nil {
		return false, fmt.Errorf("file sink %s: encode event %s: %v", s.path, a.Event.ID, err)
	}
	line = append(line, '\n')
	// Where this line starts, in case another writer appended meanwhile.
	if end, err := s.f.Seek(0, io.SeekEnd); err == nil {
		s.size = end
	}
	n, err := s.f.Write(line)
	if err == nil {
		err = s.f.Sync()
	}
	if err != nil {
		if n > 0 {
			_ = s.f.Truncate(s.size)
		}
		return true, fmt.Errorf("file sink: %w", err)
	}
	s.size += int64(n)
	s.lastID = a.Event.ID
	return false, nil
}

// Close closes the file; later deliveries fail without retry.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
