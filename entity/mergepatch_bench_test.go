package entity

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time: the box is shared, so
// wall-clock figures mostly measure the scheduler; "cpu-ns/KB" is what one
// kilobyte of patch costs this process, flat when the work is linear.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchMerge runs MergePatch(target, patch) b.N times and reports bytes,
// allocations and CPU time per op and per KB of patch.
func benchMerge(b *testing.B, target, patch []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(patch)))
	start := cpuTime()
	for b.Loop() {
		if _, err := MergePatch(target, patch); err != nil {
			b.Fatal(err)
		}
	}
	if used := float64(cpuTime() - start); used > 0 {
		b.ReportMetric(used/float64(b.N), "cpu-ns/op")
		b.ReportMetric(used/float64(b.N)/(float64(len(patch))/1024), "cpu-ns/KB")
	}
}

// widePatch is a merge patch of about kb kilobytes with one member per
// key, cycling through the four things a member can do to a target made
// by wideTarget: replace a scalar, delete, merge into an object, add.
func widePatch(kb int) []byte {
	b := []byte{'{'}
	for i := 0; len(b) < kb<<10; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"k`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `":`...)
		switch i % 4 {
		case 0:
			b = strconv.AppendInt(b, int64(i), 10)
		case 1:
			b = append(b, "null"...)
		case 2:
			b = append(b, `{"x":null,"y":[1,2]}`...)
		default:
			b = append(b, `"new"`...)
		}
	}
	return append(b, '}')
}

// wideTarget holds the keys of widePatch(kb) that the patch replaces,
// deletes or merges into (three in four).
func wideTarget(kb int) []byte {
	b := []byte{'{'}
	n := 0
	for i := 0; n < kb<<10; i++ {
		if i%4 == 3 {
			n += 12
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, `"k`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `":{"x":1,"z":"old"}`...)
		n = len(b)
	}
	return append(b, '}')
}

// deepDoc nests depth objects {"a":{"a":...{"a":leaf}}} with a sibling
// member at every level, so a patch and its target share the whole path.
func deepDoc(depth int, leaf string) []byte {
	var b []byte
	for i := 0; i < depth; i++ {
		b = append(b, `{"s":1,"a":`...)
	}
	b = append(b, leaf...)
	for i := 0; i < depth; i++ {
		b = append(b, '}')
	}
	return b
}

// BenchmarkMergePatch reports the cost of one merge per byte of patch
// (b.SetBytes): flat MB/s across sizes and depths means linear work.
func BenchmarkMergePatch(b *testing.B) {
	for _, kb := range []int{1, 10, 100, 1000} {
		target, patch := wideTarget(kb), widePatch(kb)
		b.Run(fmt.Sprintf("wide/%dKB", kb), func(b *testing.B) { benchMerge(b, target, patch) })
	}
	for _, depth := range []int{10, 100, 1000, 10000} {
		// depth levels in all: the standard decoder's (and json.Valid's)
		// ceiling is 10000.
		target, patch := deepDoc(depth-1, `{"old":1}`), deepDoc(depth-1, `{"new":true,"s":null}`)
		b.Run(fmt.Sprintf("deep/%d", depth), func(b *testing.B) { benchMerge(b, target, patch) })
	}
}

// BenchmarkPatchDepthCheck is the check every PATCH body meets before
// merging: within the limit it reads the whole body, past it only up to
// the first level too deep, so a 10,000-deep body costs what 257 levels do.
func BenchmarkPatchDepthCheck(b *testing.B) {
	for _, depth := range []int{10, 100, 1000, 10000} {
		patch := deepDoc(depth, `1`)
		b.Run(fmt.Sprintf("deep/%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(patch)))
			want := depth > 256
			for b.Loop() {
				if deeperThan(patch, 256) != want {
					b.Fatal("wrong answer")
				}
			}
		})
	}
}
