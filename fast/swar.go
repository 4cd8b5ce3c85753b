package fast

import "encoding/binary"

// Byte checks eight bytes at a time (SWAR: one 64-bit word holds eight
// bytes, and additions that cannot carry from one byte into the next
// compare all eight at once). They run on every entity get, on its id
// (BENCHMARKS.md, issue 25, run N: a byte-at-a-time pass over the id
// cost more instructions than the rest of the text guard).

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// word8 is s[i:i+8] as a little-endian word; the compiler makes it one
// load.
func word8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// word4b is b[i:i+4] in the low half of a word whose high half is four
// '0' bytes (hex digits, so hexWord passes them).
func word4b(b []byte, i int) uint64 {
	return uint64(binary.LittleEndian.Uint32(b[i:])) | 0x30303030<<32
}

// plainWord: none of x's eight bytes is NUL, '%' or 0x80 and above.
func plainWord(x uint64) bool {
	p := x ^ ('%' * swarOnes)
	// (v - ones) &^ v has a byte's high bit set for a zero byte of v (and
	// never when no byte is zero); bytes of 0x80 and above are refused
	// first, so v's own high bits do not matter.
	return x&swarHigh == 0 && ((x-swarOnes)&^x|(p-swarOnes)&^p)&swarHigh == 0
}

// hexWord: each of x's eight bytes is 0-9, a-f or A-F. For a byte c below
// 0x80, c + (0x80 - lo) has its high bit set exactly when c >= lo, and no
// sum exceeds 0xff, so no byte carries into the next.
func hexWord(x uint64) bool {
	if x&swarHigh != 0 {
		return false
	}
	y := x | 0x20*swarOnes // A-F to a-f; no digit becomes a letter
	digit := (x + (0x80-'0')*swarOnes) &^ (x + (0x7f-'9')*swarOnes)
	letter := (y + (0x80-'a')*swarOnes) &^ (y + (0x7f-'f')*swarOnes)
	return (digit|letter)&swarHigh == swarHigh
}

// hexVal[c] is hex digit c's value, 0xff for every other byte.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

// parseCanonicalUUID decodes s in the canonical 8-4-4-4-12 form (hex
// digits of either case), as uuid.Parse does; ok is false for anything
// else, which uuid.Parse then answers (the other forms, the errors). One
// table read per digit, at constant offsets (no bounds checks after the
// length's), run on every entity get's id.
func parseCanonicalUUID(s string) (id [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	var hi, lo, bad byte
	hi, lo = hexVal[s[0]], hexVal[s[1]]
	bad |= hi | lo
	id[0] = hi<<4 | lo
	hi, lo = hexVal[s[2]], hexVal[s[3]]
	bad |= hi | lo
	id[1] = hi<<4 | lo
	hi, lo = hexVal[s[4]], hexVal[s[5]]
	bad |= hi | lo
	id[2] = hi<<4 | lo
	hi, lo = hexVal[s[6]], hexVal[s[7]]
	bad |= hi | lo
	id[3] = hi<<4 | lo
	hi, lo = hexVal[s[9]], hexVal[s[10]]
	bad |= hi | lo
	id[4] = hi<<4 | lo
	hi, lo = hexVal[s[11]], hexVal[s[12]]
	bad |= hi | lo
	id[5] = hi<<4 | lo
	hi, lo = hexVal[s[14]], hexVal[s[15]]
	bad |= hi | lo
	id[6] = hi<<4 | lo
	hi, lo = hexVal[s[16]], hexVal[s[17]]
	bad |= hi | lo
	id[7] = hi<<4 | lo
	hi, lo = hexVal[s[19]], hexVal[s[20]]
	bad |= hi | lo
	id[8] = hi<<4 | lo
	hi, lo = hexVal[s[21]], hexVal[s[22]]
	bad |= hi | lo
	id[9] = hi<<4 | lo
	hi, lo = hexVal[s[24]], hexVal[s[25]]
	bad |= hi | lo
	id[10] = hi<<4 | lo
	hi, lo = hexVal[s[26]], hexVal[s[27]]
	bad |= hi | lo
	id[11] = hi<<4 | lo
	hi, lo = hexVal[s[28]], hexVal[s[29]]
	bad |= hi | lo
	id[12] = hi<<4 | lo
	hi, lo = hexVal[s[30]], hexVal[s[31]]
	bad |= hi | lo
	id[13] = hi<<4 | lo
	hi, lo = hexVal[s[32]], hexVal[s[33]]
	bad |= hi | lo
	id[14] = hi<<4 | lo
	hi, lo = hexVal[s[34]], hexVal[s[35]]
	bad |= hi | lo
	id[15] = hi<<4 | lo
	return id, bad&0xf0 == 0
}
