// Command ceiling is the reference point of bench/api.sh: a minimal Go HTTP
// server (standard library only) that answers every request with the exact
// status, headers and body captured from kadens's GET /organization/{id}.
// It does no routing, authentication or database work, so its throughput is
// the ceiling that net/http plus wrk reach on this machine; whatever kadens
// falls short of it is spent in kadens.
//
//	go run ./bench/ceiling -listen 127.0.0.1:9000 -headers resp.headers -body resp.body
//
// The headers file is what `curl -D` writes: a status line, then one
// "Name: value" per line. Date and Content-Length are left to net/http, which
// sets them as it does for kadens.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9000", "address to serve on")
	headersFile := flag.String("headers", "", "captured response headers (curl -D format)")
	bodyFile := flag.String("body", "", "captured response body")
	flag.Parse()

	status, header, err := readHeaders(*headersFile)
	if err != nil {
		log.Fatalf("ceiling: %v", err)
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatalf("ceiling: %v", err)
	}
	header.Set("Content-Length", strconv.Itoa(len(body)))

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dst := w.Header()
		for k, v := range header {
			dst[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
	srv := &http.Server{
		Addr:              *listen,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	log.Fatal(srv.ListenAndServe())
}

// readHeaders parses a curl -D dump: "HTTP/1.1 200 OK" then header lines.
func readHeaders(path string) (int, http.Header, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw)))
	line, err := r.ReadLine()
	if err != nil {
		return 0, nil, fmt.Errorf("%s: no status line: %w", path, err)
	}
	fields := strings.Fields(line)
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/") {
		return 0, nil, fmt.Errorf("%s: bad status line %q", path, line)
	}
	status, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0, nil, fmt.Errorf("%s: bad status %q", path, fields[1])
	}
	mh, err := r.ReadMIMEHeader()
	if err != nil && len(mh) == 0 {
		return 0, nil, fmt.Errorf("%s: headers: %w", path, err)
	}
	h := http.Header(mh)
	h.Del("Date")
	h.Del("Content-Length")
	h.Del("Connection")
	h.Del("Keep-Alive")
	return status, h, nil
}
