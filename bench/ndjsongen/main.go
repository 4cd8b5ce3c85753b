// Command ndjsongen writes realistic order documents as NDJSON, for bulk
// import and streaming-ingest measurements:
//
//	go run ./bench/ndjsongen -bytes 1073741824 > orders.ndjson
//	go run ./bench/ndjsongen -n 200000 > orders.ndjson
//
// Each ~1 KB document has an order id, customer id, status, decimal amount,
// currency, quantity, priority, express flag, ISO date-time, a 300-400
// character note, shipping and billing addresses, three tags and three
// order lines; values vary with the document's number.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	n := flag.Int("n", 0, "documents to write (0: until -bytes)")
	limit := flag.Int64("bytes", 0, "stop once this many bytes are written (0: -n decides)")
	flag.Parse()
	if *n <= 0 && *limit <= 0 {
		fmt.Fprintln(os.Stderr, "ndjsongen: give -n or -bytes")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	pad := strings.Repeat("lorem ipsum ", 40)
	statuses := []string{"NEW", "PAID", "SHIPPED"}
	var written int64
	for i := 0; (*n <= 0 || i < *n) && (*limit <= 0 || written < *limit); i++ {
		express := "false"
		if i%2 == 1 {
			express = "true"
		}
		k, err := fmt.Fprintf(w, `{"orderId":"o-%08d","customerId":"c-%05d","status":"%s","amount":%d.%02d,"currency":"EUR","qty":%d,"priority":%d,"express":%s,`+
			`"createdAt":"2026-11-%02dT10:%02d:00Z","notes":"%s",`+
			`"shipping":{"name":"N %d","street":"%d Main St","city":"Springfield","zip":"%05d","country":"US"},`+
			`"billing":{"name":"N %d","street":"%d Main St","city":"Springfield","zip":"%05d","country":"US"},`+
			`"tags":["a%d","b","c"],"lines":[{"sku":"S-%d","qty":%d,"price":%d.99,"desc":"item one"},`+
			`{"sku":"S-%d","qty":1,"price":5.50,"desc":"item two"},{"sku":"S-%d","qty":2,"price":1.25,"desc":"item three"}]}`+"\n",
			i, i%50000, statuses[i%3], i%5000, i%100, 1+i%9, i%5, express, 1+i%28, i%60, pad[:300+i%100],
			i, i%999, i%99999, i, i%999, i%99999, i%7, i%1000, 1+i%4, i%200, i%300, i%400)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ndjsongen:", err)
			os.Exit(1)
		}
		written += int64(k)
	}
}
