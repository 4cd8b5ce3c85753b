package main

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/bench/orderdoc"
	"svc/bench/procstat"
)

// Yardsticks: fixed pieces of work measured in the same run as the
// scenarios, so a figure can be stated as a multiple of them and compared
// with another day's machine.

// threadCPU is the CPU time of the calling OS thread (RUSAGE_THREAD).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp runs op until at least minCPU of this thread's CPU and minOps
// calls are spent and returns the CPU per call in µs.
func cpuPerOp(minOps int, minCPU time.Duration, op func() error) (float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := op(); err != nil { // warm-up
		return 0, err
	}
	t0 := threadCPU()
	n := 0
	for n < minOps || threadCPU()-t0 < minCPU {
		if err := op(); err != nil {
			return 0, err
		}
		n++
	}
	return float64(threadCPU()-t0) / float64(n) / 1e3, nil
}

// rsaKey is made once per process: the yardstick is signing, not key
// generation.
var rsaKey *rsa.PrivateKey

// rsaYardsticks measures one RSA-2048 PKCS #1 v1.5 SHA-256 signature (what
// an RS256 token costs) and one verification, in µs of CPU, with the
// crypto/rsa of this build (GOEXPERIMENT=boringcrypto makes it
// BoringCrypto's). sign is one thread's CPU per signature on its own;
// signPar is this process's CPU per signature (utime + stime from /proc,
// as the scenarios measure svc) while one goroutine per core signs: the
// conditions of svc's token endpoint under load, where signatures share
// the cores' caches and the runtime's scheduling is counted too.
func rsaYardsticks() (sign, signPar, verify float64, err error) {
	if rsaKey == nil {
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			return 0, 0, 0, err
		}
	}
	digest := sha256.Sum256([]byte(`{"alg":"RS256","typ":"JWT"}.{"sub":"benchsuite"}`))
	var sig []byte
	sign, err = cpuPerOp(100, 300*time.Millisecond, func() (err error) {
		sig, err = rsa.SignPKCS1v15(nil, rsaKey, crypto.SHA256, digest[:])
		return err
	})
	if err != nil {
		return 0, 0, 0, err
	}
	verify, err = cpuPerOp(1000, 300*time.Millisecond, func() error {
		return rsa.VerifyPKCS1v15(&rsaKey.PublicKey, crypto.SHA256, digest[:], sig)
	})
	if err != nil {
		return 0, 0, 0, err
	}
	signPar, err = parallelSign(digest[:], time.Second)
	return sign, signPar, verify, err
}

// parallelSign signs in one goroutine per core for at least d and returns
// the process's CPU per signature in µs.
func parallelSign(digest []byte, d time.Duration) (float64, error) {
	self := os.Getpid()
	t0, err := procstat.Read(self)
	if err != nil {
		return 0, err
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, runtime.NumCPU())
	deadline := time.Now().Add(d)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := rsa.SignPKCS1v15(nil, rsaKey, crypto.SHA256, digest); err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	t1, err := procstat.Read(self)
	if err != nil {
		return 0, err
	}
	return float64(t1.Ticks-t0.Ticks) / procstat.ClockTicks / float64(n.Load()) * 1e6, nil
}

// pgYardsticks measures, on a fresh database of the server whose
// postmaster is pgPID, a bare INSERT of an order document into a table
// with the GIN index svc's entity table has (jsonb_path_ops): single-row
// autocommit and 1,000-row multi-row INSERT. Each is PostgreSQL's CPU (every
// process of the server) per row, in µs.
func pgYardsticks(ctx context.Context, url string, pgPID int) (single, multi float64, err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`CREATE TABLE yard (id bigserial PRIMARY KEY, doc jsonb NOT NULL)`,
		`CREATE INDEX yard_doc ON yard USING gin (doc jsonb_path_ops)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return 0, 0, err
		}
	}
	seq := 0
	doc := func() string { seq++; return string(orderdoc.Append(nil, seq)) }
	measure := func(minRows int, minWall time.Duration, batch func() (int, error)) (float64, error) {
		if _, err := batch(); err != nil { // warm-up: plans, first pages
			return 0, err
		}
		t0, err := procstat.TreeTicks(pgPID)
		if err != nil {
			return 0, err
		}
		start, rows := time.Now(), 0
		for rows < minRows || time.Since(start) < minWall {
			n, err := batch()
			if err != nil {
				return 0, err
			}
			rows += n
		}
		t1, err := procstat.TreeTicks(pgPID)
		if err != nil {
			return 0, err
		}
		return float64(t1-t0) / procstat.ClockTicks / float64(rows) * 1e6, nil
	}
	single, err = measure(500, 3*time.Second, func() (int, error) {
		_, err := conn.Exec(ctx, `INSERT INTO yard (doc) VALUES ($1)`, doc())
		return 1, err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("single-row INSERT: %w", err)
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO yard (doc) VALUES `)
	for i := 1; i <= 1000; i++ {
		if i > 1 {
			q.WriteByte(',')
		}
		fmt.Fprintf(&q, "($%d)", i)
	}
	args := make([]any, 1000)
	multi, err = measure(10_000, 3*time.Second, func() (int, error) {
		for i := range args {
			args[i] = doc()
		}
		_, err := conn.Exec(ctx, q.String(), args...)
		return len(args), err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("1,000-row INSERT: %w", err)
	}
	return single, multi, nil
}
