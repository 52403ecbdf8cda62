// Command zipdist writes a Lambda deployment package reproducibly: one zip
// holding the given files at the archive's root, in name order, each with a
// fixed modification time (1980-01-01, the zip format's epoch), mode 0755
// and the same compression, so the same binaries always make the same bytes
// (deploy/build.sh; docs/aws.md, "Build").
//
//	go run ./deploy/zipdist -o dist/stream-router.zip dist/stream-router/bootstrap
package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"
)

func main() {
	out := flag.String("o", "", "the zip to write")
	flag.Parse()
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "zipdist:", err)
		os.Exit(1)
	}
}

// fixedTime is every entry's modification time: the zip format's epoch, in
// UTC (a zip stores local wall time without a zone).
var fixedTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func run(out string, files []string) error {
	if out == "" || len(files) == 0 {
		return errors.New("usage: zipdist -o OUT.zip FILE...")
	}
	sorted := append([]string(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return filepath.Base(sorted[i]) < filepath.Base(sorted[j]) })
	var buf bytes.Buffer
	if err := write(&buf, sorted); err != nil {
		return err
	}
	// Written to a temporary file and renamed: a failed run leaves no
	// half-written package for Terraform to upload.
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func write(w io.Writer, files []string) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	seen := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		if seen[name] {
			return fmt.Errorf("two files named %s", name)
		}
		seen[name] = true
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: fixedTime}
		h.SetMode(0o755)
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}
