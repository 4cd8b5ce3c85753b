package infer

import (
	"math/rand"
	"strconv"
	"testing"
)

// The fast path for short literals must agree with the general digit
// analysis wherever it answers.
func TestClassifyShortAgreesWithDigits(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	lits := []string{"0", "-0", "127", "-128", "128", "-129", "32767", "32768", "-32769",
		"2147483647", "-2147483648", "2147483648", "999999999999999999", "-999999999999999999",
		"1.5", "0.1", "123.456789012345", "1.0", "10.50", "-0.25", "123456789012345.6"}
	for i := 0; i < 20000; i++ {
		switch r.Intn(3) {
		case 0:
			lits = append(lits, strconv.FormatInt(r.Int63()>>uint(r.Intn(63)), 10))
		case 1:
			lits = append(lits, strconv.FormatInt(-r.Int63()>>uint(r.Intn(63)), 10))
		default:
			lits = append(lits, strconv.FormatInt(r.Int63n(1e9), 10)+"."+strconv.FormatInt(r.Int63n(1e9), 10))
		}
	}
	answered := 0
	for _, l := range lits {
		short, ok := classifyShort([]byte(l))
		if !ok {
			continue
		}
		answered++
		if full := classifyDigits([]byte(l)); short != full {
			t.Fatalf("%s: fast path %s, digits %s", l, short, full)
		}
	}
	if answered < len(lits)/2 {
		t.Fatalf("fast path answered only %d of %d", answered, len(lits))
	}
}

func TestClassifyBoundaries(t *testing.T) {
	for lit, want := range map[string]DataType{
		"127": Byte, "128": Short, "-128": Byte, "-129": Short, "32768": Integer,
		"2147483648": Long, "9223372036854775807": Long, "9223372036854775808": BigInteger,
		"170141183460469231731687303715884105727":  BigInteger,
		"-170141183460469231731687303715884105728": BigInteger,
		"170141183460469231731687303715884105728":  UnboundInteger,
		"1e2": Byte, "1.0": Byte, "1e10": Long, "1e39": UnboundInteger, "1.5e300": UnboundInteger,
		"0.000001": Double, "123456789012345.6": BigDecimal, "3.14159265358979323846": UnboundDecimal,
		"1e-292": Double, "1e-293": UnboundDecimal, "4.9E-324": UnboundDecimal,
		"99999999999999999999.999999999999999999":  BigDecimal,
		"170141183460469231731.687303715884105727": BigDecimal,
		"170141183460469231731.687303715884105728": UnboundDecimal,
	} {
		if got := classifyNumber([]byte(lit)); got != want {
			t.Errorf("%s: %s, want %s", lit, got, want)
		}
	}
}
