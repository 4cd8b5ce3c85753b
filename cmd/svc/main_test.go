package main

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"svc/storage/pgtest"
)

// realBinaryParallel is how many tests of this package run at least at
// once unless -parallel says otherwise. Most of them drive svc child processes (built
// once, by svcBinary) and spend their time waiting on them and on
// PostgreSQL, so the default of GOMAXPROCS (2 on a 2-core CI machine)
// would leave the machine idle; each parallel test owns its ports, its
// directories and its database.
const realBinaryParallel = 4

// TestMain raises -parallel for the package (when not given), drops the
// PostgreSQL databases the tests made (pgtest.Run) and removes the binary
// svcBinary built once the tests are done.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && runtime.GOMAXPROCS(0) < realBinaryParallel {
		if err := flag.Set("test.parallel", strconv.Itoa(realBinaryParallel)); err != nil {
			panic(err)
		}
	}
	code := pgtest.Run(m)
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
