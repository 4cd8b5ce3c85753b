// Command ndjsongen writes realistic order documents (bench/orderdoc) as
// NDJSON, for bulk import and streaming-ingest measurements:
//
//	go run ./bench/ndjsongen -bytes 1073741824 > orders.ndjson
//	go run ./bench/ndjsongen -n 200000 -varied > varied.ndjson
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"svc/bench/orderdoc"
)

func main() {
	n := flag.Int("n", 0, "documents to write (0: until -bytes)")
	limit := flag.Int64("bytes", 0, "stop once this many bytes are written (0: -n decides)")
	varied := flag.Bool("varied", false, "documents whose extra fields keep growing the model")
	flag.Parse()
	if *n <= 0 && *limit <= 0 {
		fmt.Fprintln(os.Stderr, "ndjsongen: give -n or -bytes")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	var written int64
	buf := make([]byte, 0, 2048)
	for i := 0; (*n <= 0 || i < *n) && (*limit <= 0 || written < *limit); i++ {
		if *varied {
			buf = orderdoc.AppendVaried(buf[:0], i)
		} else {
			buf = orderdoc.Append(buf[:0], i)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			fmt.Fprintln(os.Stderr, "ndjsongen:", err)
			os.Exit(1)
		}
		written += int64(len(buf))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "ndjsongen:", err)
		os.Exit(1)
	}
}
